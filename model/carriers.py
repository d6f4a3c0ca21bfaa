"""Word lists for the normalization task generator: nouns for the article slots, words for random
sentences, names and odd tokens. The hand-written carrier sentences are text files in
`model/sentences/` (one per line). Plain data, no logic: `model/data.py` decides how they are split
and combined.
"""

# ---------------------------------------------------------------------------------------------
# Nouns for the article templates' slots: "{nm}"/"{nf}" a Spanish masculine/feminine noun, "{noun}"
# an English one.

NOUNS_M_ES = (
    "perro gato libro coche árbol río barco tren lápiz cuaderno reloj paraguas sombrero zapato "
    "vaso plato cuchillo teléfono ordenador jardín museo castillo puente camino bosque lago "
    "volcán pájaro caballo pez regalo mensaje periódico abrigo piano violín espejo cuadro "
    "sillón edificio hospital mercado tejado balcón pasillo"
).split()
NOUNS_F_ES = (
    "casa mesa silla ventana puerta carta llave mochila bicicleta guitarra manzana naranja "
    "botella taza cuchara lámpara cama camisa falda chaqueta ciudad playa montaña isla calle "
    "plaza iglesia escuela biblioteca película canción historia pregunta respuesta idea "
    "fotografía maleta nevera cocina flor estrella nube"
).split()
NOUNS_EN = (
    "dog cat book car tree river boat train pencil notebook watch umbrella hat shoe glass "
    "plate knife phone computer garden museum castle bridge road forest lake volcano bird "
    "horse fish gift message newspaper coat piano violin mirror painting chair window door "
    "letter key backpack bicycle guitar apple bottle cup lamp bed shirt jacket beach island"
).split()

# Plain random sentences are drawn from these, so the model learns to copy, not to memorize.
# Number words and month names are filtered out at load time (see `_plain_words`).
WORDS_ES = (
    "el la los las un una unos unas y o pero porque que de del a al en con sin por para "
    "sobre entre hacia desde hasta muy más menos también nunca siempre ya todavía aquí allí "
    "hoy ayer mañana ahora luego después antes bien mal casi solo tan como cuando donde "
    "quien cual este esta ese esa aquel mi tu su nuestro vuestro yo tú él ella nosotros "
    "ellos ser estar tener hacer poder decir ir ver dar saber querer llegar pasar deber "
    "poner parecer quedar creer hablar llevar dejar seguir encontrar llamar venir pensar "
    "salir volver tomar conocer vivir sentir tratar mirar contar empezar esperar buscar "
    "existir entrar trabajar escribir perder producir ocurrir entender pedir recibir "
    "recordar terminar permitir aparecer conseguir comenzar servir sacar necesitar "
    "mantener resultar leer caer cambiar presentar crear abrir considerar oír acabar "
    "es son era fue había hay tiene tienen dijo hizo puede va vamos vino sabe quiere "
    "casa mundo vida tiempo día año hombre mujer niño niña gente país ciudad parte lugar "
    "trabajo gobierno empresa agua tierra mano ojo cabeza corazón noche tarde semana mes "
    "historia palabra nombre familia padre madre hijo hija amigo amiga camino mar cielo "
    "sol luna viento fuego luz sombra calle puerta ventana libro carta mesa cama coche "
    "tren perro gato pájaro árbol flor campo montaña río playa isla pueblo escuela "
    "iglesia guerra paz amor miedo verdad mentira problema pregunta respuesta idea razón "
    "música canción color rojo azul verde blanco negro grande pequeño nuevo viejo bueno "
    "malo mejor peor largo corto alto bajo joven feliz triste fácil difícil rápido lento "
    "claro oscuro frío caliente dulce amargo limpio sucio lleno vacío rico pobre fuerte "
    "débil cerca lejos dentro fuera arriba abajo quizás además entonces así sí no señor "
    "señora doctor profesora café pan queso vino leche huevo manzana naranja azúcar sal "
    "pingüino cigüeña año niñez muñeca acción canción jamás también pájaro árbol lápiz "
    "después según través crisis análisis jardín corazón avión camión razón algún"
).split()
WORDS_EN = (
    "the a an and or but because that of to in on with without by for about between "
    "toward from until very more less also never always already still here there today "
    "yesterday tomorrow now later after before well badly almost only so as when where "
    "who which this that these those my your his her our their I you he she we they it "
    "be is are was were been have has had do does did can could will would should must "
    "say said go went see saw give gave know knew want wanted get got make made come came "
    "think thought look looked take took find found tell told ask asked work worked seem "
    "feel felt try tried leave left call called keep kept let begin began help talk turn "
    "start show hear play run move live believe bring happen write sit stand lose pay meet "
    "include continue set learn change lead understand watch follow stop create speak read "
    "spend grow open walk win offer remember love consider appear buy wait serve die send "
    "expect build stay fall cut reach kill remain house world life time day year man woman "
    "child people country city part place work government company water land hand eye "
    "head heart night afternoon week family father mother son daughter friend road sea "
    "sky sun moon wind fire light shadow street door window book letter table bed car "
    "train dog cat bird tree flower field mountain river beach island village school "
    "church war peace love fear truth lie problem question answer idea reason music song "
    "color red blue green white black big small new old good bad better worse long short "
    "tall low young happy sad easy hard fast slow clear dark cold hot sweet bitter clean "
    "dirty full empty rich poor strong weak near far inside outside up down maybe besides "
    "then thus yes no mister doctor coffee bread cheese wine milk egg apple orange sugar "
    "salt penguin café naïve résumé coöperate fiancée jalapeño piñata déjà vu"
).split()
NAMES = (
    "Ana Luis Marta Pedro Lucía Javier Carmen Diego Sofía Pablo Elena Andrés Inés Raúl "
    "Begoña Íñigo Nuria Óscar Ramón Rocío John Mary James Emma Oliver Grace Henry Chloe "
    "Liam Zoë Noah Olivia Ethan Amelia Jack Lily Chen Wei Aisha Fatima Kenji Yuki Ngozi "
    "Dmitri Søren Zoltán Madrid Barcelona Sevilla Bilbao Lima Bogotá Quito London Boston "
    "Dublin Chicago Toronto Sydney Oaxaca Cádiz Málaga Zürich"
).split()
# Extra non-word tokens mixed into random plain sentences; all stay as they are.
ODD_TOKENS = ("—", "…", "(sic)", "&", "#12", "@ana", "%", "€", "$", "😀", "★", "→", "°C", "ñ", "ß", "ü")
