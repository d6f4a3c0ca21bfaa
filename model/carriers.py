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
El otorrinolaringólogo atendió a {n} pacientes durante la campaña de invierno.
Según la Dra. Núñez, el electrocardiograma se repitió {n} veces.
¿Cuántas gallinas hay? —Unas {n}, más o menos.
El arqueólogo catalogó {n} fragmentos de cerámica íbera.
En São Paulo circulan a diario {n} autobuses urbanos.
Søren asegura que su granja de Jutlandia cría {n} cerdos.
La fábrica textil de Łódź despidió a {n} trabajadores.
Nguyễn descargó {n} archivos (todos comprimidos) en su portátil.
«Necesitamos {n} voluntarios más», insistió la alcaldesa.
La cosecha de aceitunas llegó a {n} kilos.
El torneo reunió a {n} ajedrecistas de Europa y Asia.
Zoë ha leído ya {n} cómics de superhéroes; ¡no para!
Los bomberos evacuaron a {n} vecinos del barrio de Triana.
La pingüinera de Punta Tombo alberga {n} parejas reproductoras.
Fotosíntesis aparte, el cultivo consumió {n} litros de agua.
El juez impuso multas por valor de {n} euros.
Tras la tormenta, quedaron sin luz {n} hogares.
La receta de la abuela pide {n} gramos de azúcar moreno.
El servidor procesó {n} peticiones en apenas medio minuto.
Muñoz & Hijos facturó {n} dólares —según fuentes internas— en el ejercicio fiscal.
Tenemos {n} razones para desconfiar, Sr. Ibáñez.
El campeón corrió {n} metros sin detenerse.
La Filarmónica de Viena interpretó la sinfonía ante {n} espectadores.
En aquel videojuego ya había derrotado a {n} dragones.
El glaciar retrocedió {n} metros en la última década.
Dicen que el castillo de Peñíscola tiene {n} escalones.
El agricultor sembró {n} hectáreas de trigo y cebada.
El colegio repartió {n} mochilas entre los alumnos más pequeños.
¡Qué barbaridad, {n} mensajes sin leer!
La Ley de Enjuiciamiento Civil tiene más de {n} artículos.
A {n} kilómetros de Cádiz se encuentra la ermita.
Calculamos que el meteorito viajaba a {n} kilómetros por hora.
El hospital de Valdecilla realizó {n} trasplantes hepáticos.
La plataforma suma ya {n} suscriptores en Latinoamérica.
Gasté {n} pesos en empanadas, ¡y todavía tengo hambre!
El Guadalquivir arrastró {n} toneladas de sedimentos.
Pagaron {n} libras por el cuadro de Turner.
Al final del trimestre, la cooperativa exportó {n} cajas de naranjas.
El señor O'Connor heredó {n} acres en Irlanda.
La encuesta (realizada por teléfono) consultó a {n} hogares.
El inventario registra {n} pergaminos medievales.
La cantante vendió {n} discos con su álbum de debut.
Me debes {n} euros, Íñigo.
Se estima que hay {n} especies de escarabajos sin describir.
Durante la pandemia, el laboratorio analizó {n} muestras.
El hipódromo acogió a {n} aficionados pese a la lluvia.
Al pie de la cordillera pastaban {n} vicuñas.
El grupo de rock tocó {n} canciones sin descanso.
La Universidad de Salamanca concedió {n} becas.
El alpinista ascendió {n} metros antes del anochecer.
La tecnológica invirtió {n} dólares en inteligencia artificial.
«¿Cuántos?» «Pues {n}, creo».
La bodega almacena {n} barricas de roble francés.
El puerto de Róterdam gestiona {n} contenedores al mes.
Hubo {n} heridos leves, informó Protección Civil.
El equipo de Björn ganó por {n} puntos de diferencia.
El paciente tomó {n} miligramos de ibuprofeno.
La muralla de Ávila tiene {n} almenas, según la guía.
El votante medio esperó {n} minutos en la cola.
La aerolínea canceló {n} vuelos por la huelga.
En Reikiavik viven {n} personas, aproximadamente.
El paleontólogo desenterró {n} huesos de dinosaurio.
Juan Pérez-Llorente acumuló {n} puntos en la clasificación.
La caravana estaba formada por {n} camellos.
Los ingenieros instalaron {n} paneles solares en el tejado.
El tribunal examinó {n} pruebas documentales.
El presupuesto municipal destina {n} euros a parques y jardines.
La huelga afectó a {n} trenes de cercanías.
El termómetro marcó {n} grados en Oimiakón.
El espectáculo costó {n} coronas danesas.
La colmena producía {n} kilos de miel al año.
Mi prima ha tejido {n} bufandas este invierno.
El bibliotecario restauró {n} incunables.
Se vendieron {n} entradas en pocos minutos.
El ornitólogo anilló {n} golondrinas.
Sra. Gutiérrez, su cuenta tiene {n} euros de saldo.
El parque eólico tiene {n} aerogeneradores.
Durante la Edad Media, la peste acabó con {n} florentinos.
El club de lectura reunió a {n} socios.
El atleta keniano completó {n} vueltas al circuito.
El dron sobrevoló {n} parcelas de viñedo.
Hemos recibido {n} currículos para el puesto de fontanero.
Cracovia recibe {n} turistas al año.
¡Llevo {n} horas esperando!
El arquitecto diseñó {n} viviendas sociales.
La campaña de vacunación inmunizó a {n} niños.
Las termitas construyeron {n} galerías subterráneas.
El fondo de inversión perdió {n} dólares en pocas horas.
Éramos {n}, y aun así no cabíamos.
La lista de espera supera los {n} pacientes.
Los mineros extrajeron {n} toneladas de cobre.
La aplicación se descargó {n} veces.
Entrenó {n} horas semanales antes del maratón.
El huracán derribó {n} árboles en Puerto Rico.
Cuando llegamos a Düsseldorf, llevábamos {n} kilómetros recorridos.
El volcán expulsó {n} metros cúbicos de lava.
En el aula caben {n} alumnos; ni más ni menos.
El ayuntamiento plantará {n} encinas en la alameda.
Aquella pareja tuvo {n} nietos.
El granjero ordeña {n} vacas cada madrugada.
El faro de Finisterre guió a {n} barcos.
¿Quién necesita {n} calcetines?
Marcó {n} goles en la liga argentina.
Los pescadores capturaron {n} atunes rojos.
La sonda tomó {n} fotografías de Júpiter.
El abogado revisó {n} cláusulas del contrato.
La feria atrajo a {n} expositores internacionales.
El pañuelo de seda costaba {n} yenes.
La enfermera administró {n} dosis de la vacuna.
El algoritmo clasificó {n} imágenes sin errores.
Zúñiga escribió a mano {n} cartas de amor.
La hemeroteca conserva {n} periódicos del siglo pasado.
Su fortuna ascendía a {n} rublos.
El cocinero peló {n} patatas para la tortilla.
Aquí trabajan {n} personas — casi todas mujeres.
El barómetro bajó {n} milibares en pocas horas.
El documental cuenta con {n} horas de grabación inéditas.
El total de participantes fue de {n}.
La población de la comarca ronda los {n}.
Accidentes registrados: {n}.
Los asistentes, según los organizadores, superaron los {n}.
¿Los kilómetros recorridos? Exactamente {n}.
La cifra oficial de víctimas asciende a {n}.
Los votos nulos sumaron {n}.
Puntuación final de Ramírez: {n}.
Casi {n} jubilados firmaron la petición…
Más de {n} ornitólogos madrugaron para ver las grullas.
Unos {n} refugiados cruzaron la frontera esa noche.
No olvides: {n} cucharadas de aceite de oliva, no cucharaditas.
Fueron {n} los que votaron en contra, ¿verdad?
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
The otolaryngologist saw {n} patients during flu season.
According to Dr. Okafor, the sample contained {n} bacterial colonies.
Archaeologists unearthed {n} pottery shards near Knossos.
São Paulo's metro carries {n} passengers every weekday.
Søren's farm in Jutland raises {n} pigs.
The textile mill in Łódź laid off {n} workers.
Nguyễn downloaded {n} files (all zipped) onto his laptop.
"We need {n} more volunteers," the mayor insisted.
The olive harvest came to {n} kilos.
The tournament brought together {n} chess players from Europe and Asia.
Zoë has already read {n} comic books; she won't stop!
Firefighters evacuated {n} residents from the old quarter.
The penguin colony at Punta Tombo hosts {n} breeding pairs.
Photosynthesis aside, the crop consumed {n} liters of water.
The judge imposed fines totaling {n} dollars.
After the storm, {n} homes were left without power.
Grandma's recipe calls for {n} grams of brown sugar.
The server handled {n} requests in half a minute.
Patel & Sons billed {n} dollars — according to insiders — last fiscal year.
We've got {n} reasons to be suspicious, Mr. Whitaker.
The Vienna Philharmonic performed before {n} spectators.
In that game she'd already defeated {n} dragons.
The glacier retreated {n} meters over the past decade.
The lighthouse has {n} steps, or so the guide claims.
The farmer sowed {n} acres of wheat and barley.
Wow, {n} unread messages!
The statute contains more than {n} sections.
The meteorite was traveling at {n} miles per hour.
The streaming platform now has {n} subscribers in Latin America.
I spent {n} pesos on empanadas, and I'm still hungry!
They paid {n} pounds for the Turner painting.
Mrs. O'Neill inherited {n} acres in County Kerry.
The survey (conducted by phone) reached {n} households.
The inventory lists {n} medieval manuscripts.
Her debut album sold {n} copies.
You owe me {n} bucks, Liam.
Scientists estimate there are {n} undescribed beetle species.
The racetrack drew {n} fans despite the rain.
At the foot of the Andes grazed {n} vicuñas.
The band played {n} songs without a break.
The climber ascended {n} feet before nightfall.
The tech giant invested {n} dollars in machine learning.
"How many?" "About {n}, I think."
The winery stores {n} French oak barrels.
The Port of Rotterdam handles {n} containers each month.
There were {n} minor injuries, emergency services said.
Björn's team won by {n} points.
The patient took {n} milligrams of ibuprofen.
Only {n} days until vacation!
The airline canceled {n} flights because of the strike.
The paleontologist dug up {n} dinosaur bones.
The caravan consisted of {n} camels.
Engineers installed {n} solar panels on the roof.
The court examined {n} exhibits.
It was {n} degrees in Death Valley yesterday.
The beehive produced {n} pounds of honey a year.
My cousin has knitted {n} scarves this winter.
The librarian restored {n} incunabula.
There are {n} reasons to visit Oaxaca.
They sold {n} tickets in minutes.
The ornithologist ringed {n} swallows.
Ms. Gutiérrez, your account has a balance of {n} dollars.
The drought killed {n} head of cattle.
The wind farm has {n} turbines.
The plague wiped out {n} Florentines.
The Kenyan runner completed {n} laps.
We've received {n} résumés for the plumber's job.
Kraków welcomes {n} tourists a year.
I've been waiting for {n} hours!
The architect designed {n} affordable homes.
Researchers sequenced {n} yeast genomes.
The vaccination drive immunized {n} kids.
Termites dug {n} underground tunnels.
The hedge fund lost {n} dollars in a few hours.
There were {n} of us, and we still didn't fit.
The waiting list exceeds {n} patients.
Miners extracted {n} tons of copper.
The app was downloaded {n} times.
The hurricane toppled {n} trees in Puerto Rico.
By the time we reached Düsseldorf, we'd driven {n} kilometers.
The volcano spewed {n} cubic meters of lava.
The classroom holds {n} students; no more, no less.
The council will plant {n} oaks in the park.
That couple has {n} grandchildren.
Who needs {n} socks?
He scored {n} goals in the Argentine league.
Fishermen caught {n} bluefin tuna.
The probe took {n} photographs of Jupiter.
The lawyer reviewed {n} clauses of the contract.
The silk scarf cost {n} yen.
The nurse administered {n} doses of the vaccine.
The algorithm classified {n} images flawlessly.
Her fortune amounted to {n} rubles.
The cook peeled {n} potatoes for the stew.
The barometer dropped {n} millibars within hours.
Bees visit {n} flowers a day.
Total attendance was {n}.
The county's population hovers around {n}.
Recorded accidents: {n}.
The official death toll has risen to {n}.
Spoiled ballots totaled {n}.
Final score for Ramírez: {n}.
Nearly {n} retirees signed the petition…
More than {n} birdwatchers gathered at dawn.
Some {n} refugees crossed the border overnight.
Well over {n} spectators packed the bleachers.
Exactly {n} marbles were in the jar; I counted them myself.
Don't forget: {n} tablespoons of olive oil, not teaspoons.
It's been {n} years since anyone climbed that peak.
O'Brien's pub served {n} pints on St. Patrick's Day.
The encyclopedia's index runs to {n} entries.
Haven't you got {n} spare chairs for the rehearsal?
The electrocardiogram recorded {n} irregular beats overnight.
The self-driving prototype logged {n} miles without incident.
A whopping {n} pancakes were flipped at the charity breakfast.
The chef's signature dish uses {n} saffron threads.
Dr. Nakamura's lab bred {n} fruit flies.
Greenhouse emissions fell by {n} tonnes.
The telescope has catalogued {n} galaxies so far.
They've shipped {n} headsets — a record.
"That's {n} doubloons, matey," growled the pirate.
Our crowdfunding campaign raised {n} euros… and counting.
The quarterback threw for {n} yards this season.
The referendum passed with {n} votes to spare.
The landlord demanded {n} dollars upfront.
Søren counted {n} reindeer near Tromsø.
Across the archipelago, {n} islands remain uninhabited.
Last autumn, the orchard yielded {n} bushels of apples.
The hikers were {n} meters from the summit when the fog rolled in.
Was it really {n} votes, or did they miscount?
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
La Dra. Villaseñor firmó el informe el {d}.
El otorrinolaringólogo me citó para el {d}.
Según el registro parroquial, fue bautizado el {d}.
La excavación arqueológica comenzó el {d} en Atapuerca.
¿Seguro que el examen de Física es el {d}?
El plazo para recurrir la sentencia expira el {d}.
Søren aterrizó en Copenhague el {d}, cansadísimo.
La fábrica textil de Łódź cerró definitivamente el {d}.
Nguyễn se matriculó en la Universidad de Hanói el {d}.
Zoë publicó su novela el {d}; ¡menudo éxito!
«Nos conocimos el {d}», recordó la anciana.
La oferta es válida hasta el {d}.
Fecha de caducidad: {d}.
Fecha de nacimiento: {d}
El electrocardiograma se realizó el {d} a petición del cardiólogo.
A partir del {d}, la biblioteca abrirá también por la tarde.
Desde el {d} no hemos vuelto a saber nada de él.
La vendimia terminó el {d}, justo antes de las heladas.
El partido de vuelta se disputará el {d} en Maracaná.
La granizada del {d} arrasó los viñedos de La Rioja.
El Sr. Echeverría dejó el cargo el {d}.
La actualización de seguridad se lanzó el {d}.
El juicio quedó visto para sentencia el {d}.
La expedición alcanzó la cima del Aconcagua el {d}.
Entrega de trabajos: hasta el {d}.
La empresa presentó resultados el {d} y las acciones se dispararon.
Me vacuné contra la gripe el {d}.
Los pingüinos regresaron a la colonia el {d}.
El videojuego sale a la venta el {d}; ¡ya lo he reservado!
El acta notarial lleva fecha del {d}.
Llovió sin parar desde el {d} hasta bien entrada la primavera.
El cohete despegó de Kourou el {d}.
La canción se grabó en Abbey Road el {d}.
Mis padres compraron la finca el {d}.
La cigüeña volvió al campanario el {d}, como cada año.
Quedan pocas plazas para el curso que empieza el {d}.
El último pago se recibió el {d}.
Último día para votar: {d}.
El terremoto del {d} dejó muchísimos damnificados.
Volveremos a Oaxaca el {d}.
El reloj del ayuntamiento se paró el {d} y nadie lo arregló.
La Sra. Ibáñez se jubiló el {d}, tras décadas en la escuela.
El tratado de paz fue ratificado el {d}.
¿Quién podría olvidar lo ocurrido el {d}?
La herencia se repartió el {d}, no sin disputas.
El paciente recibió el alta el {d}.
¿Dónde estabas el {d}?
El servidor estuvo caído desde el {d}.
El manuscrito de Sor Juana apareció el {d} en el convento de San Jerónimo.
La orquesta estrenó la sinfonía el {d} en Viena.
Factura emitida el {d}.
Vencimiento: {d}.
La cuenta fue cancelada el {d} por impago.
La fotografía está tomada el {d}, según los metadatos.
El hospital inauguró su nueva ala de pediatría el {d}.
El rodaje en Reikiavik arrancó el {d}.
Papá se sacó el carné de conducir el {d}.
Las obras del puente deben terminar antes del {d}.
El acuerdo tendrá validez hasta el {d}, salvo prórroga.
El huracán tocó tierra en Puerto Rico el {d}.
El grupo de rock dio su concierto de despedida el {d}.
El pleno del ayuntamiento aprobó los presupuestos el {d}.
La nevada del {d} aisló varios pueblos del Pirineo.
Hasta el {d} no sabremos si nos conceden la beca.
Inscrito en el Registro Civil el {d}.
El fichaje se hizo oficial el {d}.
Jugamos la partida decisiva el {d}… y perdí.
La policía detuvo al sospechoso el {d} en Düsseldorf.
El yacimiento fue declarado Patrimonio de la Humanidad el {d}.
La hemeroteca digitalizó el diario del {d}.
El contrato de alquiler se renovó el {d}.
La aerolínea suspendió los vuelos a Cracovia el {d}.
Dejé de fumar el {d} y no he recaído.
Los resultados del análisis llegaron el {d}.
La catedrática defendió su tesis el {d}.
La exposición de Frida Kahlo se clausura el {d}.
El eclipse se produjo el {d} y fue visible desde Canarias.
El perro de los vecinos se escapó el {d}; todavía lo buscan.
Mi hija empezó la guardería el {d}.
El vuelo con destino a São Paulo salió con retraso el {d}.
Inicio de la temporada de caza: {d}.
El ganadero vendió el rebaño el {d}.
El consejo de administración se reunió a puerta cerrada el {d}.
El Tribunal Supremo dictó sentencia el {d}.
Los Nguyễn se mudaron a Lyon el {d}.
¡Feliz aniversario! Nos casamos el {d}, ¿recuerdas?
El boletín oficial publicó la norma el {d}.
La tumba fue descubierta el {d} por el equipo de la Dra. Llorente.
Se abrió el testamento el {d} ante notario.
El parque eólico entró en funcionamiento el {d}.
El cantautor murió el {d} en su casa de Montevideo.
Aquel incendio del {d} todavía se recuerda en el barrio.
El colegio celebra la graduación el {d}.
La campaña de vacunación arrancó el {d}.
El satélite dejó de emitir señales el {d}.
Te espero el {d} en la estación de Atocha.
Las rebajas terminan el {d}.
Según la bitácora, el barco encalló el {d}.
El telescopio captó la supernova el {d}.
El abogado presentó el recurso el {d}, en el último momento.
La empresa quebró el {d}, dejando deudas enormes.
El Sr. O'Connor llegó a Dublín el {d}.
La vacuna se aprobó el {d} tras ensayos clínicos exhaustivos.
Apúntatelo: el {d}.
Lo vi por última vez el {d}.
Fecha límite de pago: {d}.
Vigente desde el {d}.
El cuadro fue robado del museo el {d}.
El ordenador se compró el {d}, así que aún está en garantía.
El hallazgo se anunció el {d} en la revista Nature.
La feria de ganado se celebró el {d} en Zafra.
Mi bisabuelo emigró a Argentina el {d}.
El pago de la matrícula vence el {d}.
Según el diario de Ana, el bombardeo empezó el {d}.
Desde el {d} hasta hoy, nada ha cambiado.
El programa se emitió el {d} en horario de máxima audiencia.
Los bomberos sofocaron el incendio el {d}.
El pingüino Íñigo nació en el zoo el {d}.
El examen de conducir es el {d}, ¿me acompañas?
El equipo consiguió el ascenso el {d}.
El libro de actas recoge lo acordado el {d}.
El paquete llegó a Łódź el {d}.
La piscina municipal abre el {d}.
El cardiólogo revisará los resultados el {d}.
La granja avícola fue inspeccionada el {d}.
Queda aplazada la vista prevista para el {d}.
«Hasta el {d} no hay nada que hacer», suspiró Begoña.
Se admiten alegaciones a partir del {d}.
—¿Cuándo llegaste? —El {d}.
Nacida el {d} en Mondoñedo, emigró siendo niña a Caracas.
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
Dr. Villaseñor signed the report on {d}.
The otolaryngologist booked me in for {d}.
According to parish records, he was baptized on {d}.
The excavation at Çatalhöyük began on {d}.
Are you sure the physics exam is on {d}?
The deadline to appeal the ruling is {d}.
Søren landed in Copenhagen on {d}, utterly exhausted.
The Łódź textile mill shut down for good on {d}.
Nguyễn enrolled at Hanoi University on {d}.
Zoë's novel came out on {d}; it was an instant hit.
"We met on {d}," the old woman recalled.
This offer is valid until {d}.
Expiration date: {d}.
Date of birth: {d}
The electrocardiogram was performed on {d} at the cardiologist's request.
Starting {d}, the library will also open in the evenings.
We haven't heard from him since {d}.
The grape harvest wrapped up on {d}, just before the frost.
The return leg will be played on {d} at the Maracanã.
The hailstorm of {d} flattened the vineyards.
Mr. Echeverría stepped down on {d}.
The security patch was released on {d}.
Closing arguments ended on {d}.
The expedition reached the summit of Aconcagua on {d}.
Assignments are due by {d}.
The company reported earnings on {d}, and its shares soared.
I got my flu shot on {d}.
The penguins returned to the rookery on {d}.
The game launches on {d} — I've already preordered it!
The notarized deed is dated {d}.
It rained nonstop from {d} well into spring.
The rocket lifted off from Kourou on {d}.
The song was recorded at Abbey Road on {d}.
My parents bought the ranch on {d}.
The storks came back to the bell tower on {d}, as they do every year.
Few spots remain for the course starting {d}.
The final payment was received on {d}.
Last day to vote: {d}.
The earthquake of {d} left countless people homeless.
We'll be back in Oaxaca by {d}.
The town hall clock stopped on {d} and nobody fixed it.
Mrs. Ibáñez retired on {d}, after decades of teaching.
The peace treaty was ratified on {d}.
Who could forget what happened on {d}?
The estate was divided on {d}, not without quarrels.
The patient was discharged on {d}.
Where were you on {d}?
The server had been down since {d}.
Sor Juana's manuscript turned up on {d} in a convent in Puebla.
The orchestra premiered the symphony in Vienna on {d}.
Invoice issued {d}.
Due: {d}.
The account was closed on {d} for nonpayment.
The metadata says the photo was taken on {d}.
The hospital opened its new pediatric wing on {d}.
Filming in Reykjavík kicked off on {d}.
Dad got his driver's license on {d}.
Work on the bridge must be finished before {d}.
The agreement remains in force until {d}, unless extended.
The hurricane made landfall in Puerto Rico on {d}.
The band played its farewell gig on {d}.
City council approved the budget on {d}.
The blizzard of {d} cut off several villages in the Rockies.
We won't know about the scholarship until {d}.
Registered with the county clerk on {d}.
The transfer became official on {d}.
We played the deciding match on {d}… and I lost.
Police arrested the suspect in Düsseldorf on {d}.
The site was declared a World Heritage Site on {d}.
The archive digitized the newspaper of {d}.
The airline suspended flights to Kraków on {d}.
I quit smoking on {d} and haven't relapsed.
The lab results came back on {d}.
The professor defended her dissertation on {d}.
The Frida Kahlo exhibition closes on {d}.
The eclipse occurred on {d}, visible from the Canary Islands.
The neighbors' dog ran off on {d}; they're still looking for it.
My daughter started preschool on {d}.
The flight to São Paulo left late on {d}.
Hunting season opens {d}.
The rancher sold the herd on {d}.
The board met behind closed doors on {d}.
The Supreme Court handed down its ruling on {d}.
The Nguyễns moved to Lyon on {d}.
Happy anniversary! We got married on {d}, remember?
The regulation appeared in the Federal Register on {d}.
The tomb was discovered on {d} by Dr. Carter's team.
The will was read on {d} in front of a notary.
The wind farm came online on {d}.
The songwriter died on {d} at his home in Montevideo.
People still talk about the fire of {d}.
Graduation is on {d}.
The vaccination campaign kicked off on {d}.
The satellite stopped transmitting on {d}.
Meet me at Grand Central on {d}.
The sale ends {d}.
According to the logbook, the ship ran aground on {d}.
The telescope spotted the supernova on {d}.
The lawyer filed the appeal on {d}, at the last minute.
The firm went bankrupt on {d}, leaving huge debts.
Mr. O'Connor arrived in Dublin on {d}.
The vaccine was approved on {d} after exhaustive clinical trials.
Save the date: {d}.
I last saw him on {d}.
Payment deadline: {d}.
Effective {d}.
The painting was stolen from the museum on {d}.
The laptop was bought on {d}, so it's still under warranty.
The discovery was announced in Nature on {d}.
The livestock fair was held on {d} in Zafra.
My great-grandfather emigrated to Argentina on {d}.
Tuition is due on {d}.
Anne's diary says the bombing started on {d}.
Nothing has changed since {d}.
The episode aired in prime time on {d}.
Firefighters contained the blaze on {d}.
The penguin chick hatched at the zoo on {d}.
My driving test is on {d} — will you come with me?
The team clinched promotion on {d}.
The minutes record what was agreed on {d}.
The parcel reached Łódź on {d}.
The public pool opens {d}.
The cardiologist will review the results on {d}.
The poultry farm was inspected on {d}.
The hearing set for {d} has been postponed.
"There's nothing we can do until {d}," sighed Begoña.
Objections will be accepted as of {d}.
"When did you arrive?" "On {d}."
Born {d} in Aberdeen, she moved to Toronto as a child.
It's scheduled for {d}, isn't it?
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
La farmacia de guardia abre a las 21:00.
El otorrinolaringólogo me recetó unas gotas para el oído.
¿Sabes si la Dra. Villanueva atiende los jueves?
Nguyễn trabajó en São Paulo antes de mudarse a Łódź.
El electrocardiograma salió normal, según la enfermera.
Añade la cebolla picada y remueve con cuidado.
El Betis empató en el descuento.
—No me lo puedo creer —susurró Søren.
Las entradas cuestan 35 € por persona, IVA incluido.
La contraseña debe tener al menos 8 caracteres.
El arquitecto presentó los planos del nuevo ayuntamiento.
Los pingüinos emperador soportan temperaturas de -40 °C.
Pregunte por el Sr. Ortega en recepción.
¡Cuidado con el escalón!
El juez desestimó la demanda por falta de pruebas.
La fotosíntesis convierte la luz en energía química.
Mi abuela guardaba las recetas en una caja de lata.
Nos alojamos en el hotel Miramar, habitación 214.
El paquete con seguimiento ES4471092 llegó ayer.
¿Quién se ha comido las galletas?
Según la OMS, la vacuna es segura y eficaz.
El concierto de la Filarmónica empieza a las 20:30.
Zoë toca el violonchelo desde pequeña.
Hace frío; ponte la bufanda.
Los ingresos crecieron un 12,5 % respecto al año anterior.
La tortilla de patatas lleva huevo, patata y, a veces, cebolla.
El expediente n.º 2023/118 sigue abierto.
Llovió toda la noche en Santiago de Compostela.
El portero detuvo el penalti con la punta de los dedos.
Mi hermano pequeño odia las espinacas.
La cuenta es ES91 2100 0418 4502 0005 1332.
«La vida es sueño» es de Calderón de la Barca.
La profesora corrigió los exámenes durante el fin de semana.
¿Cuánto cuesta el kilo de tomates?
Los tomates están a 2,99 €/kg esta semana.
Íñigo y Begoña se conocieron en Bilbao.
El tribunal dictó sentencia tras largas deliberaciones.
La impresora HP LaserJet no responde.
Instala la versión 4.1 del controlador.
¡Feliz cumpleaños, Rocío!
El volcán entró en erupción sin previo aviso.
Los arqueólogos hallaron cerámica romana bajo la plaza.
El autobús 27 va directo al aeropuerto.
Tengo hora en el dentista a las 9:15.
La película dura 2 h 10 min.
Jürgen pidió café con leche y tostadas.
Me duele la garganta desde anoche.
España ganó el Mundial de 2010.
El PIB de EE. UU. creció más de lo previsto.
El ayuntamiento cortará el tráfico en la avenida de la Constitución.
Ojalá llueva pronto; los campos están secos.
La cigüeña anidó sobre la torre de la iglesia.
Patricio O'Donnell es el nuevo entrenador del club.
El paciente presenta fiebre, tos y cansancio.
La reunión se ha trasladado a la sala B-3.
El Quijote se publicó en 1605.
¿Te apetece ir al cine esta tarde?
El Transiberiano atraviesa Rusia de oeste a este.
¡Silencio, por favor!
La fiscal pidió prisión provisional para el acusado.
Descarga el archivo informe_final_v3.pdf.
El termómetro marcaba 38,7 grados.
Las golondrinas vuelven cada primavera.
El vecino del 4.º toca la batería por las noches.
El electricista vendrá entre las 10:00 y las 14:00.
La biblioteca cierra en agosto.
Hace años que no veo a mis primos de Valparaíso.
Los músicos afinaron sus instrumentos en silencio.
El Dr. Ferrándiz es cardiólogo en el Hospital Clínico.
Cuidado: el suelo está mojado.
Elige entre té, café o chocolate.
Llamé al 900 123 456 y nadie contestó.
El niño se escondió debajo de la cama.
La huelga de transportes dejó a muchísimos viajeros en tierra.
¿Por qué no me lo dijiste antes?
Los bomberos tardaron 12 minutos en llegar.
Ella prefiere el pingüino de peluche al oso.
La empresa factura 3,5 M€ al año.
Recuerda: la cita es en la calle Alcalá, 45.
El perro de Łukasz ladra a los carteros.
El ensayo clínico incluyó a 240 voluntarios.
Nunca había visto un atardecer tan rojo.
Hay que regar los geranios a diario.
«¿Y ahora qué?», pensó Matías.
La final se jugará en el estadio Azteca.
La campeona del torneo de ajedrez tiene 14 años.
Ya casi es hora de cenar.
El agua hierve a 100 °C en condiciones normales.
La red wifi se llama CASA_5G.
Te lo explico luego, ahora no tengo tiempo.
Los científicos secuenciaron el genoma del ajolote.
El boxeador anunció su retirada entre lágrimas.
El mercado de abastos abre de 7:00 a 14:30.
¡Qué bien huele ese guiso!
La abogada revisó cada cláusula del contrato.
El metro de Ciudad de México siempre va lleno.
Quiero aprender a tocar el ukelele.
La tasa de paro bajó al 11,8 %.
El huracán Beryl tocó tierra en Jamaica.
Señora García, su mesa está preparada.
El cuadro de Velázquez se restauró con esmero.
La contraseña es «Gato#2024», no se lo digas a nadie.
Los nietos pasaron el verano con sus abuelos en Cádiz.
El servidor devolvió el error 404.
Nadie sabía dónde estaba la llave del desván.
Se ruega puntualidad.
El AVE Madrid-Sevilla tarda 2 h 30 min.
Para más información, escriba a info@museo-ejemplo.es.
Los zapatos cuestan 49,95 € en rebajas.
El rioja maridó bien con el cordero asado.
¿A qué hora sale el ferri hacia Ibiza?
El ferri sale a las 18:45 del muelle 3.
Mamá, ¿puedo salir a jugar?
El neurocirujano operó durante horas sin descanso.
Las elecciones se celebrarán en otoño.
Estuvimos en Reikiavik y vimos auroras boreales.
El Sr. y la Sra. Núñez llegaron tarde, como siempre.
Tengo que entregar el TFG antes de julio.
El pH de la muestra era de 7,4.
Los vikingos llegaron a Terranova antes que Colón.
Consulte www.renfe.com para ver los horarios.
¡Enhorabuena por el ascenso, Zoltán!
El bebé por fin se durmió.
¿Qué tal?
Hasta luego.
Bueno… ya veremos (si no llueve).
Ese portátil viene con Windows y 16 GB de RAM.
El NO de la asamblea fue rotundo.
Él dijo: “Mañana te llamo”, pero nunca llamó.
La muñeca de trapo estaba llena de polvo.
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
The pharmacy on Elm Street opens at 9:00.
The otolaryngologist prescribed some ear drops.
Is Dr. Patel available on Thursday?
Nguyễn worked in São Paulo before moving to Łódź.
The electrocardiogram came back normal, the nurse said.
Add the chopped onion and stir gently.
Liverpool equalized in stoppage time.
"I can't believe it," Søren whispered.
Tickets cost $35 per person, tax included.
Your password must be at least 8 characters long.
The architect presented the plans for the new city hall.
Emperor penguins survive temperatures of -40 °C.
Ask for Mr. Ortega at the front desk.
Watch your step!
The judge dismissed the lawsuit for lack of evidence.
Photosynthesis turns sunlight into chemical energy.
My grandmother kept her recipes in a tin box.
We stayed at the Seaview Hotel, room 214.
Package 1Z999AA10123456784 was delivered yesterday.
Who ate all the cookies?
According to the WHO, the vaccine is safe and effective.
The philharmonic concert starts at 8:30 p.m.
Zoë has played the cello since she was little.
It's cold outside; take your scarf.
Revenue grew 12.5% compared with last year.
Shepherd's pie needs potatoes, lamb and a little patience.
Case No. 2023-118 remains open.
It rained all night in Edinburgh.
The goalkeeper tipped the penalty over the bar.
My little brother hates spinach.
Account number: GB29 NWBK 6016 1331 9268 19.
"Hamlet" is a tragedy by William Shakespeare.
The teacher graded the exams over the weekend.
How much is a pound of tomatoes?
Tomatoes are $2.99/lb this week.
Íñigo and Begoña met in Bilbao.
The court handed down its verdict after long deliberations.
The HP LaserJet printer isn't responding.
Install driver version 4.1.
Happy birthday, Rocío!
The volcano erupted without warning.
Archaeologists found Roman pottery beneath the square.
Bus 27 goes straight to the airport.
I have a dentist appointment at 9:15.
The movie runs 2 h 10 min.
Jürgen ordered a latte and some toast.
My throat has been sore since last night.
Spain won the World Cup in 2010.
The GDP of the U.S. grew faster than expected.
The council will close Main Street to traffic.
I hope it rains soon; the fields are bone-dry.
The stork nested on top of the church tower.
Patrick O'Neill is the club's new coach.
The patient has a fever, a cough and fatigue.
The meeting has moved to room B-3.
"Don Quixote" was published in 1605.
Do you fancy going to the movies this afternoon?
The Trans-Siberian Railway crosses Russia from west to east.
Quiet, please!
The prosecutor asked that the defendant be held without bail.
Download the file final_report_v3.pdf.
The thermometer read 101.3 °F.
The swallows come back every spring.
Our upstairs neighbor plays the drums at night.
The electrician will come between 10:00 and 14:00.
The library closes in August.
I haven't seen my cousins from Valparaíso in years.
The musicians tuned their instruments in silence.
Dr. Ferrándiz is a cardiologist at St. Mary's Hospital.
Caution: wet floor.
The UN held a summit on climate change.
Choose tea, coffee or hot chocolate.
I called 1-800-555-0199 and nobody answered.
The boy hid under the bed.
Why didn't you tell me sooner?
The firefighters arrived within 12 minutes.
She prefers the stuffed penguin to the bear.
The startup's revenue hit €3.5M last year.
Remember: the address is 45 Queen's Road.
Łukasz's dog barks at the mailman.
The clinical trial enrolled 240 volunteers.
I'd never seen such a red sunset.
Prices rose 3.2% year over year.
"What now?" thought Matthew.
The final will be held at Wembley Stadium.
The chess champion is only 14.
It's almost time for dinner.
Water boils at 212 °F under normal conditions.
The Wi-Fi network is called HOME_5G.
I'll explain later; I don't have time right now.
Scientists sequenced the axolotl genome.
The boxer announced his retirement in tears.
The farmers' market is open from 7 a.m. to 2:30 p.m.
That stew smells wonderful!
The lawyer reviewed every clause of the contract.
The Tokyo subway is famously crowded.
I want to learn to play the ukulele.
Unemployment fell to 4.1%.
Hurricane Beryl made landfall in Jamaica.
Mrs. Garcia, your table is ready.
The Vermeer was carefully restored.
The Wi-Fi password is "Cat#2024", so don't tell anybody.
The grandchildren spent the summer with their grandparents in Cork.
The server returned a 404 error.
Nobody knew where the attic key was.
Please be punctual.
The Acela from Boston to New York takes about 3 h 40 min.
For more details, email info@museum-example.org.
The shoes are on sale for $49.95.
What time does the ferry to Nantucket leave?
The ferry leaves at 6:45 p.m. from pier 3.
Mom, can I go out and play?
The neurosurgeon operated for hours without a break.
Elections will be held in the fall.
We went to Reykjavík and saw the northern lights.
Mr. and Mrs. Nguyen were late, as usual.
I have to hand in my thesis before June.
The pH of the sample was 7.4.
The Vikings reached Newfoundland before Columbus.
Check www.amtrak.com for schedules.
Congratulations on the promotion, Zoltán!
The baby finally fell asleep.
How's it going?
See you later.
Well… we'll see (if it doesn't rain).
That laptop comes with Windows and 16 GB of RAM.
The vote was a resounding NO.
He said, “I'll call you tomorrow,” but he never did.
The rag doll was covered in dust.
It's a well-known fact — at least in Dublin.
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
Ayer encontré un {nm} abandonado en la acera.
¿Tienes una {nf} que me puedas dejar?
Cada uno sabe lo que tiene que hacer.
Uno de ellos se quedó dormido junto al {nm}.
Una de ellas era médica en Valparaíso.
Ni uno solo de los invitados llegó puntual.
Se ayudaron el uno al otro sin dudarlo.
Uno nunca termina de conocer a la gente.
El {nm} de Íñigo es precioso; quiero uno igual.
La {nf} estaba rota, así que compramos una nueva.
Había un {nm} viejo junto a la chimenea.
Érase una vez una {nf} mágica.
—¿Cuál prefieres? —Cualquiera, dame uno.
Si uno no lo intenta, nunca lo sabrá.
Cada una de las alumnas presentó su trabajo.
Me regalaron un {nm} por mi cumpleaños.
Esa {nf} es una joya.
Uno de los invitados trajo un {nm} precioso.
Nos sentamos una frente a la otra.
¡Qué {nf} tan bonita! Quiero una.
El abuelo tallaba un {nm} de madera cada invierno.
Busco una {nf} que no sea demasiado cara.
Uno aprende de sus errores.
Dijo que tenía un {nm}, pero nadie lo vio.
Es una historia que nadie cree.
Uno de los científicos propuso una teoría nueva.
Se despidieron el uno del otro frente a la {nf}.
No quedó ni uno.
¿Alguien tiene un {nm}? El mío se ha perdido.
Mi vecina, la Sra. Ruiz, tiene una {nf} idéntica.
Pásame uno de esos, por favor.
Era un hombre alto, de voz grave.
Había una vez un rey que no sabía reír.
—¿Quieres una? —No, gracias.
Uno se cansa de buscar el {nm} perfecto.
La {nf} que buscabas es una de estas.
El {nm} de la abuela era uno de sus tesoros.
Se compró un {nm} y lo perdió enseguida.
Una tarde de otoño, Søren encontró una {nf} en el desván.
Cada uno de nosotros tiene un {nm} favorito.
No es un problema; es una oportunidad.
Uno de mis tíos es otorrinolaringólogo.
Una de mis primas estudia arquitectura en Córdoba.
La {nf} que elegiste es una buena opción.
Hay un {nm} en medio del camino.
Preparó una {nf} para la fiesta.
A uno le gusta sentirse útil.
Se lanzaron las almohadas el uno al otro.
El profesor nos enseñó un {nm} muy antiguo.
Buscaban un lugar tranquilo para vivir.
Necesito una {nf} grande para la mudanza.
Cada uno paga lo suyo.
¿Alguna vez has visto un {nm} así?
Uno de los jugadores se lesionó en el calentamiento.
Ella es una de las mejores cirujanas del país.
Es un {nm} precioso, pero muy caro.
Me encontré con una vieja amiga que llevaba un {nm}.
Uno no elige de quién se enamora.
¡Menudo {nm} te has comprado! Yo también quiero uno.
Compraron una {nf} usada en el rastro.
Dejé el {nm} en casa y tuve que pedir uno prestado.
Perdí la {nf} y tuve que comprar una.
Había un silencio extraño en la sala.
Íbamos a cenar en un restaurante japonés.
Cuando uno está cansado, todo cuesta más.
Tiene una paciencia infinita.
Uno por uno, los niños salieron al patio.
Una a una, las luces se fueron apagando.
Guárdame uno para mañana.
Es uno de esos días en que nada sale bien.
Un {nm} y una {nf}: eso es todo lo que pido.
Nguyễn tiene un {nm} que perteneció a su abuelo.
¿Quién de vosotros tiene una {nf}?
Me miró como si yo fuera un extraño.
Uno tras otro, los coches cruzaron el puente.
Se escribían cartas el uno al otro.
Es una lástima que no puedas venir.
El {nm} estaba roto; pedí uno nuevo.
Había una {nf} vieja en el fondo del armario.
Cada una eligió su propio camino.
En un rincón, junto al {nm}, dormía un gato negro.
Uno de ustedes tendrá que quedarse.
Tengo un presentimiento con ese {nm}.
Es una {nf} muy antigua, de la época de los romanos.
Dibujó un {nm} en la pizarra.
Pedro es uno de los que nunca se rinden.
La Dra. Ortega es una experta en genética.
Vivíamos en un pueblo pequeño de Asturias.
Quiero un {nm} como el tuyo.
Hay una {nf} en la esquina de la calle.
A veces uno necesita estar solo.
Cada uno en su casa y Dios en la de todos.
Se abrazaron el uno al otro al despedirse.
No había ni una nube en el cielo.
¿Es este un buen momento para hablar?
Dejó una nota junto a la {nf}.
Le regalé una {nf} a mi madre.
Conozco a uno que vende la {nf} más barata del barrio.
Fue un viaje largo y agotador.
Una de las ventajas del tren es que puedes leer.
Tenía un {nm} en la mano y una sonrisa en la cara.
La niña dibujó una {nf} amarilla.
Uno tiene que saber cuándo parar.
Cómprate un {nm} decente, hombre.
Había un {nm} y una {nf} en el escaparate.
Le pusieron una multa por aparcar mal.
«Uno siempre vuelve a los viejos sitios», cantaba ella.
¿Me dejas uno de tus bolígrafos?
Es un {nm} de los de antes.
Busqué la {nf} por todas partes; al final me prestaron una.
Los hermanos se parecen el uno al otro.
Hacía un calor insoportable.
Tomamos una copa mientras mirábamos la {nf}.
Era una {nf} enorme, casi tan alta como el {nm}.
Cada uno de los acusados negó los hechos.
Uno de los testigos cambió su declaración.
La jueza escuchó a cada uno de los testigos.
¡Qué susto me has dado! Casi me da un infarto.
Encontré un {nm} precioso en el rastro.
Mi hermana quería una {nf} de color verde.
Uno se pregunta por qué nadie hizo nada.
Me contó una historia increíble sobre São Paulo.
Un día de estos te llamo.
Para una persona como tú, no hay imposibles.
Quedaba un {nm} en el estante y me lo llevé.
¿Hay una {nf} cerca de aquí?
Uno de ellos gritó: «¡Vámonos!».
Una de ellas se rió al ver la {nf}.
Sacó un {nm} del bolsillo.
Vivimos en una {nf} junto al río.
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
One of the guests brought a {noun}.
No one noticed the {noun} on the floor.
This one is broken; can I have the other one?
The {noun} you bought is nicer than the one I have.
One by one, the lights went out.
They helped one another through the storm.
One day, I'll visit São Paulo.
She's the one who found the {noun}.
I lost my {noun}, so I bought a new one.
One never really knows people.
Which one is yours?
One of my cousins is an archaeologist.
Is that the one you told me about?
No one knows where Søren went.
The {noun} in the window is the one I want.
One of them must be lying.
Everyone loves a good {noun}, and no one can resist a free one.
One can only hope for the best.
He's not the one to blame for the {noun}.
Don't buy a cheap {noun}; get a good one.
One of these days, I'll fix the {noun}.
The kids chased one another around the garden.
One evening, a stranger left a {noun} at the door.
Not one of them said a word.
The little one is sleeping.
Nguyễn is the one with the {noun}.
One of the best things about Dublin is the music.
I've got the blue one; you take the green one.
Is there a {noun} like this one in the shop?
That's the one!
One morning, the {noun} was gone.
No one answered the phone.
She's one of the most talented surgeons in Boston.
Dr. Okafor is one of the few who understood.
We lost the old {noun} and never found a new one.
"Which one?" asked Zoë.
One shouldn't judge a book by its cover.
Give the {noun} to the one who needs it most.
Pick one and let's go.
The {noun} was the one thing he couldn't replace.
One of the neighbors saw someone take the {noun}.
Somebody left a {noun} under the bench, and no one claimed it.
The students quizzed one another before the exam.
This {noun} is nice, but I prefer that one.
Each one of you has a role to play.
One of the judges disagreed with the verdict.
I'm not the one who broke the {noun}!
One wonders why they didn't call.
If you need a {noun}, I have an extra one.
One rainy afternoon, we stayed in and baked bread.
Grab a {noun}; there's one for everybody.
You're the one I was looking for.
I'm looking for a {noun}. Do you have one?
One of the players got a red card.
The {noun} is old, but it's the only one we have.
Mr. O'Connor was the one who trained the team.
No one likes a sore loser.
Let's take them one at a time.
One of the paintings turned out to be a fake.
Can you lend me a {noun}? Mine is broken and I need one.
That's one way of looking at it.
The sisters wrote to one another every week.
One day you'll understand.
Which one of you took the {noun}?
The red {noun} or the blue one?
If I had to pick a {noun}, I'd choose the cheaper one.
One of the fishermen saw a {noun} floating in the water.
She found a {noun} on the beach, one nobody else had noticed.
One has to be patient with toddlers.
No one in Łódź had heard of him.
He's one of those people who never stop talking.
Someone stole the {noun}, but no one saw anything.
One of the nurses found a {noun} in the hallway.
The {noun} was a gift from one of her students.
"Take one," she said, holding out the basket.
My {noun} broke, and yours is a nicer one anyway.
That {noun} is too small; we'll need a bigger one.
One after another, the runners crossed the finish line.
Is this {noun} the one from the museum?
One of the reasons I love Lisbon is the light.
We looked at one another in disbelief.
Put the {noun} next to the other one.
No one was hurt in the accident.
You looked at every {noun}; which one did you choose in the end?
The boy wanted a {noun} just like the one his brother had.
One summer, we drove all the way to Montréal.
One of the kittens is still hiding behind the {noun}.
That {noun}? It's the one I told you about.
The detective suspected every one of them.
No one could explain the strange noise coming from the {noun}.
I found a {noun} — a really old one.
She's the one with the purple hair.
One of the engineers spotted a crack in the {noun}.
Everyone needs a {noun} at some point, and I finally got one.
This one's on me.
The {noun} by the door is the one we need.
One should always read the small print.
I like every {noun} here; I can't decide which one to buy.
One of the pilots spoke fluent Portuguese.
If no one objects, we'll start now.
They're building a {noun} right next to the old one.
Not one person complained.
It was one of those nights.
The {noun} isn't mine; it's the one Jürgen left.
One of the kids spilled juice on the {noun}.
We need a {noun}, and a sturdy one.
The sisters finish one another's sentences.
One of the witnesses saw a {noun} near the car.
I've read that book, but not this one.
No one wanted to leave the party.
The {noun}? I gave it to the one who asked.
One sometimes forgets how lucky one is.
That was a close one!
One of the violinists broke a string.
I'll take the {noun} and the small one too.
Ms. Kowalski is the one to ask about the {noun}.
Every one of the cookies was gone.
The brothers blamed one another for the broken {noun}.
The one thing I can't stand is rudeness.
Hand me the {noun}, the heavy one.
One of her poems is about a {noun}.
No one leaves until the {noun} is found.
There's a {noun} in the hall and another one in the kitchen.
One lazy Sunday, we watched old films.
The one on the left is my aunt.
One of the volunteers fixed the {noun}.
You're one of a kind, Íñigo.
She wrapped each {noun} one by one.
Can someone tell me which one is correct?
We'll get a {noun} one day.
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
