"""Carrier sentences, word lists and nonsense-word parts for the normalization task generator.

Plain data, no logic: `model/data.py` decides how they are split and combined.
"""

# ---------------------------------------------------------------------------------------------
# Carrier sentences and word lists. "{n}" is a cardinal slot, "{d}" a date slot, "{nm}"/"{nf}"
# a masculine/feminine noun slot. Slots never open a sentence: number words are never capitalized.

NUMBER_TEMPLATES_ES = """\
Compramos {n} tornillos para la mesa.
El pueblo tiene {n} habitantes según el censo.
En la biblioteca hay {n} libros antiguos.
La empresa vendió {n} unidades el año pasado.
Me faltan {n} páginas para terminar la novela.
El estadio tiene capacidad para {n} personas.
Recorrimos {n} kilómetros en bicicleta.
La factura asciende a {n} euros.
¿De verdad pagaste {n} pesos por eso?
Ese árbol tiene más de {n} años.
Hay un total de {n} alumnos matriculados.
¡Ganó {n} partidas seguidas!
El informe menciona {n} casos nuevos.
Plantaron {n} olivos junto al río.
La montaña mide {n} metros de altura.
Según la policía, asistieron {n} manifestantes.
El barco transportaba {n} contenedores.
Necesito {n} gramos de harina y una pizca de sal.
La colección incluye {n} sellos de todo el mundo.
El vídeo tiene {n} visitas.
Contamos {n} ovejas antes de dormir.
La ciudad registró {n} nacimientos.
Su abuelo guardaba {n} cartas en un baúl.
El museo recibe {n} visitantes cada verano.
Se imprimieron {n} ejemplares del periódico.
La obra costó {n} dólares, dijo el arquitecto.
En el almacén quedan {n} cajas.
El satélite dio {n} vueltas a la Tierra.
Marta escribió {n} poemas en su juventud.
Aquel verano llovió {n} días.
El equipo anotó {n} puntos en la temporada.
La granja produce {n} litros de leche.
Leímos que había {n} especies en peligro.
El tren tardó {n} minutos en llegar.
«Son {n} en total», respondió el cajero.
La herencia sumaba {n} reales.
"""

NUMBER_TEMPLATES_EN = """\
She counted {n} sheep before falling asleep.
The town has {n} inhabitants according to the census.
We bought {n} screws for the table.
The library holds {n} old books.
The company sold {n} units last year.
I still have {n} pages left to read.
The stadium can seat {n} people.
We cycled {n} kilometers along the coast.
The invoice comes to {n} dollars.
Did you really pay {n} pounds for that?
That tree is more than {n} years old.
There are {n} students enrolled this term.
He won {n} games in a row!
The report mentions {n} new cases.
They planted {n} olive trees by the river.
The mountain is {n} feet tall.
Police said {n} protesters attended the march.
The ship carried {n} containers.
You need {n} grams of flour and a pinch of salt.
The collection includes {n} stamps from all over the world.
The video has {n} views.
The city recorded {n} births.
Her grandfather kept {n} letters in a trunk.
The museum welcomes {n} visitors every summer.
They printed {n} copies of the newspaper.
"It cost {n} euros," the architect said.
There are {n} boxes left in the warehouse.
The satellite circled the Earth {n} times.
Mary wrote {n} poems in her youth.
It rained for {n} days that summer.
The team scored {n} points this season.
The farm produces {n} liters of milk.
We read that {n} species are endangered.
The train was {n} minutes late.
Roughly {n} volunteers signed up.
The fund raised {n} dollars in a week.
"""

DATE_TEMPLATES_ES = """\
El artículo se publicó el {d}.
La reunión se aplazó al {d}.
Nació el {d} en un pueblo de Galicia.
El contrato vence el {d}.
¿Te acuerdas de lo que pasó el {d}?
La boda será el {d}, si todo va bien.
El puente se inauguró el {d}.
Recibimos la carta el {d}.
La tienda cerró sus puertas el {d}.
Según el acta, la sesión terminó el {d}.
El plazo de inscripción acaba el {d}.
¡Nos vemos el {d}!
El manuscrito está fechado el {d}.
Llegaron a Buenos Aires el {d}.
La ley entró en vigor el {d}.
Firmaron la paz el {d}, tras años de guerra.
El concierto quedó fijado para el {d}.
Mi abuela se casó el {d}.
La última actualización es del {d}.
El cometa será visible el {d}.
Presentó la dimisión el {d}.
Todo empezó el {d}, una tarde de lluvia.
El pedido se envió el {d}.
Fecha de emisión: {d}.
La final se juega el {d} en Sevilla.
Según el diario, el incendio comenzó el {d}.
Tiene cita con el médico el {d}.
El barco zarpó el {d}.
La obra se estrenó el {d}.
Volvimos a casa el {d}, agotados.
"""

DATE_TEMPLATES_EN = """\
The meeting was moved to {d}.
The article was published on {d}.
She was born on {d} in a small town.
The contract expires on {d}.
Do you remember what happened on {d}?
The wedding will take place on {d}, if all goes well.
The bridge opened on {d}.
We received the letter on {d}.
The shop closed for good on {d}.
According to the minutes, the session ended on {d}.
Registration closes on {d}.
See you on {d}!
The manuscript is dated {d}.
They arrived in Boston on {d}.
The law came into force on {d}.
The treaty was signed on {d}, after years of war.
The concert is scheduled for {d}.
My grandmother got married on {d}.
Last updated: {d}.
The comet will be visible on {d}.
He resigned on {d}.
It all started on {d}, on a rainy afternoon.
Your order shipped on {d}.
Date of issue: {d}.
The final will be played on {d} in London.
The paper says the fire broke out on {d}.
She has a doctor's appointment on {d}.
The ship set sail on {d}.
The play premiered on {d}.
We finally got home on {d}, exhausted.
"""

PLAIN_ES = """\
La heroica ciudad dormía la siesta.
En un lugar de la Mancha, de cuyo nombre no quiero acordarme.
¿Dónde está la estación de autobuses?
¡Qué alegría verte por aquí!
El niño pequeño corría detrás del perro.
Llámame cuando llegues, por favor.
La reunión es el 2026-11-29 a las 10:30.
Mi número de teléfono es el 612 345 678.
El código postal es 28013.
Pagó 15,50 € por el menú del día.
La temperatura bajó a -3 °C anoche.
Escribió «hasta pronto» en la pizarra.
El año 1492 aparece en todos los libros de historia.
Vive en la calle Mayor, 17, 3.º B.
El vuelo IB3166 sale de la puerta B22.
Señor Muñoz, su pedido está listo.
La cigüeña volvió al campanario.
Quedamos a las 8 en la plaza.
La versión 2.3.1 corrige varios errores.
No sé si vendrá mañana o pasado.
El 15/03/2024 se entregó el informe.
Compré pan, leche y huevos.
—¿Vienes? —preguntó ella.
Ana y Luis viajaron a Perú en tren.
El capítulo 12 es el más largo.
Me encanta el olor de la lluvia.
Visite www.ejemplo.es para más información.
Escríbenos a hola@ejemplo.es.
El río Ebro desemboca en el Mediterráneo.
Hoy hace un día espléndido.
Las llaves están encima de la mesa.
¿Has visto mi paraguas?
La niña aprendió a nadar este verano.
El tren de las 7:45 llegó con retraso.
Cuesta un 20 % menos que el año pasado.
Ese pingüino se llama Íñigo.
Aquí no pasa nada.
El profesor explicó la lección con paciencia.
Mañana iremos al mercado.
Tengo que renovar el DNI antes de diciembre.
"""

PLAIN_EN = """\
The heroic city was taking its nap.
It was the best of times, it was the worst of times.
Where is the bus station?
What a joy to see you here!
The little boy ran after the dog.
Call me when you get there, please.
The meeting is on 2026-11-29 at 10:30.
My phone number is 555-0143.
The zip code is 90210.
He paid $15.50 for lunch.
The temperature dropped to -3 °F last night.
She wrote "see you soon" on the board.
The year 1492 appears in every history book.
They live at 221B Baker Street.
Flight BA2490 leaves from gate B22.
Mr. O'Brien, your order is ready.
The stork came back to the bell tower.
Let's meet at 8 in the square.
Version 2.3.1 fixes several bugs.
I don't know whether she'll come tomorrow.
The report was handed in on 03/15/2024.
I bought bread, milk and eggs.
"Are you coming?" she asked.
Anna and Louis took the train to Peru.
Chapter 12 is the longest.
I love the smell of rain.
Visit www.example.com for more information.
Write to us at hello@example.com.
The Thames flows through London.
It's a beautiful day today.
The keys are on the table.
Have you seen my umbrella?
The girl learned to swim this summer.
The 7:45 train arrived late.
It costs 20% less than last year.
That penguin is called Zoë.
Nothing ever happens here.
The teacher explained the lesson patiently.
Tomorrow we'll go to the market.
I need to renew my passport before December.
"""

ARTICLE_TEMPLATES_ES = """\
Tengo un {nm} en casa.
Había una {nf} en la puerta.
Uno nunca sabe lo que puede pasar.
Dame uno, por favor.
Quiero una {nf} nueva.
Cada uno trae su {nm}.
Una de ellas llegó tarde.
Es uno de los mejores del mundo.
Ni uno de ellos quiso hablar.
Compré un {nm} y una {nf}.
Uno de mis amigos vive en Lima.
¿Me prestas una?
Había una vez un {nm} muy curioso.
Alguno tendrá un {nm} para mí.
Se miraron el uno al otro.
Es una {nf} preciosa.
Uno se acostumbra a todo.
Busco un {nm} barato.
Me queda una sola {nf}.
Vimos un {nm} enorme en el parque.
Cuando uno viaja, aprende mucho.
Pásame una, que me he quedado sin {nf}.
"""

ARTICLE_TEMPLATES_EN = """\
One of them left early.
This one is mine.
I want the red one.
One never knows what might happen.
Which one do you prefer?
No one came to the {noun}.
Someone left a {noun} here.
One day, the {noun} simply broke.
Give me one, please.
They looked at one another.
Everyone brought a {noun}.
I'd like a new one.
One of my friends lives in Lima.
That one over there is cheaper.
Can I borrow one?
One must always be careful with the {noun}.
She is one of the best in the world.
We saw a huge {noun} and a tiny one in the park.
Any one of you could do it.
The old {noun} was replaced by a new one.
One by one, they entered the room.
Is this the one you lost?
"""

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
