"""Generate train_replies.jsonl: pairs of ASSISTANT replies that precede a user follow-up
("when was she born?", "how much is it?", "tell me more about the first one").
label 1: same content reworded (reworded_reply) or two content-free acks (acknowledgment).
label 0: different entity (different_answer), same items reordered (reordered_list),
same answer with another number (different_numbers). Stdlib only, seed 0."""
import json, random, itertools, os, re

R = random.Random(0)
def rows(s): return [dict(zip(s[0].split("|"), l.split("|"))) for l in s[1:]]

# ---- entity pools -------------------------------------------------------------
PEOPLE = rows(["n|d",
 "Marie Curie|a pioneer of radioactivity research", "Richard Feynman|a physicist known for quantum electrodynamics",
 "Ada Lovelace|often called the first computer programmer", "Frida Kahlo|a Mexican painter famous for her self-portraits",
 "Nelson Mandela|South Africa's first Black president", "Jane Austen|the author of Pride and Prejudice",
 "Alan Turing|a founder of theoretical computer science", "Rosalind Franklin|a chemist whose X-ray images helped reveal DNA's structure",
 "Nikola Tesla|an inventor known for alternating-current systems", "Amelia Earhart|the first woman to fly solo across the Atlantic",
 "Katherine Johnson|a NASA mathematician who calculated spaceflight trajectories", "Leonardo da Vinci|a Renaissance painter and inventor",
 "Toni Morrison|a Nobel Prize-winning novelist", "Hedy Lamarr|an actress who co-invented frequency hopping",
 "Grace Hopper|a computing pioneer who helped create COBOL", "Charles Darwin|the naturalist behind the theory of evolution"])
FICT = [dict(d, ar="an" if d["r"][0] in "aeiou" else "a") for d in rows(["n|r|p",
 "Talia Renwick|jazz pianist|she", "Oren Vasquell|landscape architect|he", "Mirela Dunhoff|marine biologist|she",
 "Casimir Ebbe|novelist|he", "Priya Hallorann|chess grandmaster|she", "Joaquin Trell|documentary filmmaker|he",
 "Wren Alcott|climate scientist|she", "Dmitri Saulo|opera tenor|he", "Lena Marchbank|robotics engineer|she",
 "Tobias Quell|mountaineer|he", "Ines Korvath|architect|she", "Bastian Oyelaran|economist|he"])]
LAPTOPS = rows(["n|a|s|f",
 "Zentra 14|light|14-inch|long battery life", "Korrin Vessa Pro 14|slim|14-inch|a bright OLED screen",
 "Altamar Slate 13|compact|13-inch|a very quiet fanless design", "Nuvio Book 15|roomy|15-inch|a full-size keyboard",
 "Pellux Air 13|featherweight|13-inch|all-day battery", "Drakon G16|powerful|16-inch|a dedicated graphics card",
 "Ostra Flex 14|convertible|14-inch|a touchscreen that folds back", "Quill Studio 16|sturdy|16-inch|a color-accurate display"])
PRODUCTS = rows(["n|k|f",
 "Brevo Duo|espresso machine|a built-in milk frother", "Auralis Q3|pair of noise-cancelling headphones|a 40-hour battery",
 "Tidewell Mini|robot vacuum|a self-emptying base", "Ferro Pan Pro|cast-iron skillet|a pre-seasoned surface",
 "Lumo Ring 2|smart ring|sleep tracking", "Kestrel X5|mirrorless camera|in-body stabilization",
 "Hearthly 6|air fryer|a six-quart basket", "Vireo Band|fitness tracker|a two-week battery",
 "Solace Glide|office chair|adjustable lumbar support", "Orbit Kettle S|electric kettle|precise temperature control",
 "Nimbus Pad 11|tablet|a stylus in the box", "Grovewood Desk|standing desk|a quiet dual motor"])
PLACES = rows(["n|c|h",
 "Lisbon|Portugal|hilly streets and old trams", "Kyoto|Japan|temples and traditional tea houses",
 "Cape Town|South Africa|Table Mountain and nearby beaches", "Edinburgh|Scotland|a castle above a medieval old town",
 "Oaxaca|Mexico|its markets and mole sauces", "Ljubljana|Slovenia|a small, walkable riverside center",
 "Hoi An|Vietnam|lantern-lit streets and tailors", "Quebec City|Canada|its walled French-speaking old town",
 "Porto|Portugal|port wine cellars along the river", "Cusco|Peru|Inca walls and access to Machu Picchu",
 "Tbilisi|Georgia|sulfur baths and a lively food scene", "Valencia|Spain|paella and a long city beach"])
DISHES = rows(["n|d",
 "shakshuka|eggs poached in a spiced tomato sauce", "pad see ew|wide rice noodles stir-fried with soy sauce",
 "mujadara|lentils and rice topped with crispy onions", "chana masala|chickpeas simmered in a tangy tomato gravy",
 "risotto alla milanese|a creamy saffron risotto", "bibimbap|rice bowl topped with vegetables and a fried egg",
 "fish tacos|battered fish in tortillas with slaw", "minestrone|a hearty vegetable and bean soup",
 "chicken adobo|chicken braised in vinegar and soy sauce", "ratatouille|a stew of summer vegetables",
 "pierogi|dumplings filled with potato and cheese", "pho|a beef broth noodle soup with herbs"])
BOOKS = rows(["n|w|g",
 "The Salt Cartographer|Elena Marsh|a literary mystery", "Glass Orchard|Tomas Reyne|a family saga",
 "Ninefold Sky|Aditi Varan|an epic fantasy", "The Quiet Ledger|Paul Osei|a financial thriller",
 "Harbor of Small Hours|Maren Lykke|a slow-burn romance", "Iron Meridian|Kofi Adjei|a space opera",
 "A Field Guide to Leaving|Sun-mi Cho|a memoir", "The Ninth Lantern|Rafael Dunn|a historical novel",
 "Ashfall Protocol|Imogen Pryce|a techno-thriller", "Wild Thyme Summer|Clara Boone|a cozy mystery"])
SOFTWARE = rows(["n|d",
 "PostgreSQL|a robust relational database", "SQLite|a lightweight file-based database", "Redis|an in-memory key-value store",
 "Django|a batteries-included Python web framework", "Flask|a minimal Python web framework",
 "React|a JavaScript library for building user interfaces", "Vue|a progressive JavaScript framework",
 "Docker|a tool for packaging apps into containers", "Kubernetes|a system for orchestrating containers",
 "FastAPI|a fast Python framework for building APIs", "Svelte|a compiler-based UI framework", "Nginx|a web server and reverse proxy"])
TEAMS = rows(["n|s|c",
 "Harbor City Gulls|basketball|Harbor City", "Ridgeview Foxes|hockey|Ridgeview", "Port Alden Mariners|baseball|Port Alden",
 "Calder Valley Rovers|soccer|Calder Valley", "Northgate Comets|football|Northgate", "Elmsford Kings|rugby|Elmsford",
 "Silverlake Storm|volleyball|Silverlake", "Bramwell United|soccer|Bramwell"])
HIKES = rows(["n|d|f",
 "Falcon Ridge Loop|moderate|views over two lakes", "Cedar Hollow Trail|easy|a shaded creekside path",
 "Granite Spire Route|strenuous|a steep scramble to the summit", "Mossback Falls Trail|easy|a waterfall at the end",
 "Whistler Notch Trail|moderate|wildflower meadows in July", "Blackpine Traverse|strenuous|long exposed ridgelines",
 "Otter Cove Path|easy|tide pools along the coast", "Larkspur Canyon Trail|moderate|red rock walls and a slot canyon"])
MEDS = rows(["n|d",
 "ibuprofen|an anti-inflammatory pain reliever", "acetaminophen|a pain reliever and fever reducer",
 "loratadine|a non-drowsy antihistamine", "cetirizine|an antihistamine for allergy symptoms",
 "famotidine|an acid reducer for heartburn", "omeprazole|a proton pump inhibitor for acid reflux",
 "diphenhydramine|a sedating antihistamine", "naproxen|a long-acting anti-inflammatory", "loperamide|an anti-diarrheal"])
PLANS = rows(["n|d",
 "Streamly Plus|ad-free HD streaming", "CloudVault Pro|2 TB of cloud storage", "FitPath Premium|guided workouts and meal plans",
 "Linguo Max|unlimited language lessons", "Noteworthy Team|shared notebooks for teams", "Pageturn Unlimited|unlimited e-books and audiobooks",
 "Harbor VPN Plus|a VPN for up to ten devices", "Melodic Family|music streaming for six accounts",
 "CodeNest Pro|private repositories and CI minutes", "SnapDraw Studio|design tools with premium templates"])
LISTS = {
 "sorting algorithms": ["bubble sort", "merge sort", "quicksort", "insertion sort", "heap sort", "selection sort"],
 "languages": ["Python", "JavaScript", "Go", "Rust", "Java", "Ruby", "Kotlin"],
 "cities": ["Rome", "Florence", "Venice", "Naples", "Bologna", "Milan", "Verona"],
 "exercises": ["squats", "push-ups", "lunges", "planks", "burpees", "deadlifts"],
 "houseplants": ["pothos", "a snake plant", "a ZZ plant", "a spider plant", "a peace lily", "a rubber plant"],
 "board games": ["Catan", "Ticket to Ride", "Carcassonne", "Azul", "Pandemic", "Wingspan"],
 "parks": ["Yosemite", "Zion", "Glacier", "Acadia", "Arches", "Olympic"],
 "laptops": [d["n"] for d in LAPTOPS], "books": [d["n"] for d in BOOKS], "dishes": [d["n"] for d in DISHES],
 "plans": [d["n"] for d in PLANS], "tools": [d["n"] for d in SOFTWARE], "meds": [d["n"] for d in MEDS],
}

# ---- number slots ---------------------------------------------------------------
def price(lo, hi, cents=False):
    def g():
        v = R.randint(lo, hi)
        return f"${v:,}.99" if cents else f"${v:,}"
    return g
NUM = {
 "lp": price(6, 24, True), "pp": price(49, 899), "lap": lambda: f"${R.choice(range(599, 2600, 50)):,}",
 "yr": lambda: str(R.randint(1931, 1994)), "yr2": lambda: str(R.randint(2001, 2023)),
 "min": lambda: str(R.choice(range(15, 95, 5))), "tmp": lambda: str(R.choice(range(325, 475, 25))),
 "km": lambda: f"{R.randint(3, 24)}.{R.randint(0, 9)}", "m": lambda: f"{R.choice(range(150, 1500, 50)):,}",
 "mg": lambda: str(R.choice([5, 10, 20, 25, 40, 200, 220, 250, 325, 400, 500])), "cnt": lambda: str(R.choice([12, 20, 24, 30, 50, 60, 100])),
 "ttl": lambda: str(R.randint(2, 19)), "pg": lambda: str(R.choice(range(180, 720, 8))), "hr": lambda: str(R.randint(6, 40)),
 "srv": lambda: str(R.randint(2, 8)), "pct": lambda: str(R.choice([10, 15, 20, 25, 30, 40, 50])),
 "gb": lambda: str(R.choice([8, 16, 32])), "day": lambda: str(R.choice([7, 14, 30])), "cal": lambda: str(R.choice(range(180, 900, 10))), "clk": lambda: str(R.randint(5, 9)),
 "dt": lambda: f"{R.choice(['March', 'April', 'May', 'October', 'November'])} {R.randint(1, 28)}",
 "ver": lambda: f"{R.randint(1, 9)}.{R.randint(0, 12)}",
}

# ---- shapes: (pool, [phrasings], [number slots]) -------------------------------
S = []
def sh(pool, nums, *ph): S.append((pool, list(ph), nums))
# people
sh(PEOPLE, [], "{n}, {d}.", "That would be {n}, {d}.", "You're probably thinking of {n} — {d}.", "It's {n}. In short: {d}.")
sh(PEOPLE, [], "A good person to read about is {n}, {d}.", "I'd suggest looking into {n}, {d}.", "Check out {n} — {d}.")
sh(PEOPLE, [], "The answer is {n}.", "That's {n}.", "It was {n}.", "{n} is the one you're looking for.")
sh(FICT, [], "You're thinking of {n}, the {r}.", "That's {n}, {ar} {r}.", "It's {n} — {p} works as {ar} {r}.")
sh(FICT, ["yr"], "{n} is {ar} {r} born in {yr}.", "{n}, born in {yr}, is {ar} {r}.", "Born in {yr}, {n} is a well-known {r}.")
sh(FICT, ["ttl"], "{n} has won {ttl} major awards as a {r}.", "As a {r}, {n} has picked up {ttl} major awards.", "{n}, the {r}, has {ttl} major awards so far.")
# laptops
sh(LAPTOPS, [], "I'd suggest the {n}, a {a} {s} laptop with {f}.", "My pick would be the {n}: a {a} {s} machine with {f}.", "Go for the {n} — it's a {a} {s} laptop and has {f}.", "The {n} fits best; it's {a}, {s}, and offers {f}.")
sh(LAPTOPS, ["lap"], "The {n} costs about {lap}.", "You can get the {n} for roughly {lap}.", "Expect to pay around {lap} for the {n}.")
sh(LAPTOPS, ["gb", "lap"], "The {n} with {gb} GB of RAM is {lap}.", "It's {lap} for the {n} configured with {gb} GB of RAM.", "With {gb} GB of RAM, the {n} comes to {lap}.")
sh(LAPTOPS, [], "For travel, the {n} is a good fit thanks to {f}.", "Since you travel a lot, I'd go with the {n}; it has {f}.", "The {n} works well on the road because of {f}.")
# products
sh(PRODUCTS, [], "I'd recommend the {n}, a {k} with {f}.", "The {n} is my pick: a {k} that has {f}.", "Try the {n} — it's a {k} and comes with {f}.", "A solid choice is the {n}, a {k} featuring {f}.")
sh(PRODUCTS, ["pp"], "The {n} sells for {pp}.", "The {n} is priced at {pp}.", "You'll pay about {pp} for the {n}.")
sh(PRODUCTS, ["pct", "pp"], "The {n} is {pct}% off right now, so it's {pp}.", "Right now the {n} has a {pct}% discount, bringing it to {pp}.", "With the current {pct}% discount, the {n} costs {pp}.")
sh(PRODUCTS, ["yr2"], "The {n} was released in {yr2}.", "The {n} came out in {yr2}.", "It launched in {yr2}; the {n} is that model.")
sh(PRODUCTS, [], "Yes, the {n} is a good {k}; it has {f}.", "The {n} is worth it as a {k}, mainly for {f}.", "I'd say the {n} is a solid {k} — {f} is the highlight.")
sh(PRODUCTS, ["day"], "The {n} comes with a {day}-day return window.", "You can return the {n} within {day} days.", "Returns on the {n} are accepted for {day} days.")
# places
sh(PLACES, [], "You should visit {n} in {c}, known for {h}.", "I'd go to {n}, {c} — it's known for {h}.", "{n} in {c} is a great choice, with {h}.", "Try {n}, {c}; people love it for {h}.")
sh(PLACES, [], "My recommendation is {n}.", "My top destination would be {n}.", "Go with {n}.")
sh(PLACES, ["hr"], "Flying to {n} from New York takes about {hr} hours.", "The flight from New York to {n} is roughly {hr} hours.", "Expect around {hr} hours in the air from New York to {n}.")
sh(PLACES, ["pp"], "A week in {n}, {c} costs around {pp} per person, not counting flights.", "Budget roughly {pp} per person for a week in {n}, excluding flights.", "Excluding flights, a week in {n} runs about {pp} each.")
sh(PLACES, [], "For a weekend trip, I'd pick {n} for {h}.", "{n} makes a good weekend trip because of {h}.", "If it's just a weekend, go to {n} — {h}.")
# dishes
sh(DISHES, [], "How about {n}? It's {d}.", "You could make {n}, which is {d}.", "Try {n} — {d}.", "I'd suggest {n}: {d}.")
sh(DISHES, ["tmp", "min"], "For {n}, bake at {tmp}°F for {min} minutes.", "Bake the {n} at {tmp}°F for {min} minutes.", "Put the {n} in a {tmp}°F oven for {min} minutes.")
sh(DISHES, ["min", "srv"], "{n} takes about {min} minutes and serves {srv}.", "This {n} recipe serves {srv} and is ready in around {min} minutes.", "Plan on {min} minutes for {n}; it makes {srv} servings.")
sh(DISHES, [], "A good vegetarian option tonight is {n}.", "Tonight I'd make {n}, which works for vegetarians.", "{n} is an easy vegetarian dinner.")
sh(DISHES, [], "The dish you're describing is {n}, {d}.", "That sounds like {n} — {d}.", "You mean {n}, {d}.")
# books
sh(BOOKS, [], "You might like {n} by {w}, {g}.", "Try {n} by {w}; it's {g}.", "I'd recommend {w}'s {n}, {g}.", "{n}, by {w}, is {g} you'd enjoy.")
sh(BOOKS, ["pg"], "{n} by {w} is {pg} pages long.", "{w}'s {n} runs {pg} pages.", "{n} has {pg} pages.")
sh(BOOKS, ["yr2"], "{n} by {w} was published in {yr2}.", "{w} published {n} in {yr2}.", "{n} came out in {yr2}; it's by {w}.")
sh(BOOKS, [], "The book you're describing is {n} by {w}.", "That's {n}, written by {w}.", "Sounds like {w}'s {n}.")
# software
sh(SOFTWARE, [], "I'd use {n}, {d}.", "Go with {n} — it's {d}.", "{n} is a good fit: {d}.", "My suggestion is {n}, {d}.")
sh(SOFTWARE, ["ver"], "The current stable release of {n} in this setup is version {ver}.", "You're on {n} {ver}, the stable version here.", "{n} version {ver} is what's installed.")
sh(SOFTWARE, [], "For this project, {n} is the better choice.", "I'd pick {n} for this project.", "{n} suits this project best.")
sh(SOFTWARE, ["gb"], "Give the {n} container {gb} GB of memory.", "Allocate {gb} GB of memory to {n}.", "{n} should get {gb} GB of memory.")
# teams
sh(TEAMS, [], "You're thinking of the {n}, a {s} team from {c}.", "That's the {n}, who play {s} in {c}.", "It's the {n}, the {c} {s} club.")
sh(TEAMS, ["ttl"], "The {n} have won {ttl} championships.", "The {n} have {ttl} league titles.", "In total, the {n} won {ttl} titles.")
sh(TEAMS, ["yr"], "The {n} were founded in {yr}.", "The {n} date back to {yr}.", "Founded in {yr}, the {n} play {s}.")
sh(TEAMS, ["pp"], "Season tickets for the {n} start at {pp}.", "A {n} season ticket costs from {pp}.", "You can get {n} season tickets starting at {pp}.")
# hikes
sh(HIKES, [], "Try the {n}, a {d} hike with {f}.", "I'd do the {n}: it's {d} and has {f}.", "The {n} is a {d} option with {f}.", "Go for the {n} — {d}, with {f}.")
sh(HIKES, ["km", "hr"], "The {n} is {km} km and takes about {hr} hours.", "Plan about {hr} hours for the {n}, which is {km} km.", "At {km} km, the {n} takes roughly {hr} hours.")
sh(HIKES, ["m"], "The {n} climbs {m} meters.", "Expect {m} meters of elevation gain on the {n}.", "The {n} has {m} m of climbing.")
sh(HIKES, [], "For beginners, the {n} is the best bet.", "If you're new to hiking, start with the {n}.", "Beginners should go for the {n}.")
# medicines
sh(MEDS, [], "You could take {n}, {d}.", "One option is {n}, {d}.", "{n} may help; it's {d}.", "A common choice is {n}, {d}.")
sh(MEDS, ["mg", "cnt"], "The store brand {n} comes as {cnt} tablets of {mg} mg.", "It's a pack of {cnt} {n} tablets, {mg} mg each.", "That {n} box holds {cnt} tablets at {mg} mg.")
sh(MEDS, ["lp"], "A box of {n} costs about {lp}.", "{n} runs around {lp} a box.", "You can buy {n} for roughly {lp}.")
sh(MEDS, [], "The pharmacist recommended {n}.", "The pharmacist suggested {n}.", "{n} is what the pharmacist recommended.")
# plans
sh(PLANS, [], "I'd go with {n}, which gives you {d}.", "{n} is the best fit: it includes {d}.", "Try {n} — you get {d}.", "My pick is {n}, offering {d}.")
sh(PLANS, ["lp"], "{n} costs {lp} a month.", "{n} is {lp} per month.", "The monthly price of {n} is {lp}.")
sh(PLANS, ["day"], "{n} has a {day}-day free trial.", "You can try {n} free for {day} days.", "There's a free {day}-day trial of {n}.")
sh(PLANS, ["pct"], "Paying yearly for {n} saves you {pct}%.", "The annual {n} plan is {pct}% cheaper.", "With {n}, the yearly option saves {pct}%.")
sh(PLANS, [], "You're currently on {n}.", "Your account is on the {n} plan.", "Right now your subscription is {n}.")
# extra shapes
sh(PEOPLE, [], "I was referring to {n}, {d}.", "I meant {n} — {d}.", "The person I mentioned is {n}, {d}.")
sh(PRODUCTS, ["hr"], "The {n}'s battery lasts about {hr} hours.", "You get roughly {hr} hours of battery from the {n}.", "On a full charge the {n} runs around {hr} hours.")
sh(DISHES, ["cal"], "A serving of {n} has about {cal} calories.", "{n} comes to roughly {cal} calories per serving.", "Each serving of {n} is around {cal} calories.")
sh(TEAMS, ["dt"], "The {n} play their next home game on {dt}.", "The next {n} home game is on {dt}.", "On {dt}, the {n} play at home next.")
sh(HIKES, ["clk"], "The {n} trailhead gate opens at {clk} a.m.", "You can start the {n} from {clk} a.m., when the gate opens.", "Gates for the {n} open at {clk} a.m.")
sh(PLANS, ["srv"], "{n} can be shared with up to {srv} people.", "Up to {srv} people can use one {n} account.", "You can share {n} with as many as {srv} people.")
SHAPES = S

LISTPH = [
 ["1. {0}, 2. {1}, 3. {2}", "Here are three: {0}, {1}, and {2}.", "First {0}, then {1}, and finally {2}.", "My top three, in order: {0}; {1}; {2}.", "Options:\n- {0}\n- {1}\n- {2}"],
 ["I'd start with {0}, then {1}, then {2}.", "Begin with {0}, move on to {1}, and finish with {2}.", "Start: {0}. Next: {1}. Last: {2}."],
 ["You could go with {0} or {1}.", "Two options: {0} and {1}.", "Either {0} or {1} would work.", "1) {0} 2) {1}"],
 ["Top pick: {0}. Runner-up: {1}. Also good: {2}. Budget option: {3}.", "1. {0}\n2. {1}\n3. {2}\n4. {3}", "In order of preference: {0}, {1}, {2}, {3}."],
]
ACKS = ["Sure, I can help with that.", "Of course! Happy to help.", "Got it.", "Okay, noted.", "Sounds good!", "Absolutely, let's do it.",
 "No problem.", "Sure thing!", "Understood.", "Great, thanks for letting me know.", "Alright, I'm on it.", "Happy to help with that!",
 "Certainly.", "Okay!", "Noted, thanks.", "You got it.", "Sure, go ahead.", "Of course.", "Alright.", "Okay, I understand.",
 "Thanks for the context.", "Makes sense.", "Sure — what would you like to know?", "Yes, I can do that.", "Glad to help.",
 "Okay, let's get started.", "Sure, ask away.", "Definitely, I can help.", "Roger that.", "Perfect, thanks."]

def fill(ph, e, nums): return re.sub(r"\b([aA]) (?=[aeiouAEIOU])", r"\1n ", ph.format(**e, **nums))
def cap(s): return s[0].upper() + s[1:]
out, seen = [], set()
def add(a, b, label, kind):
    a, b = cap(a), cap(b)
    key = tuple(sorted((a, b)))
    if a == b or key in seen: return
    seen.add(key)
    if R.random() < 0.5: a, b = b, a
    out.append({"a": a, "b": b, "label": label, "kind": kind})

for pool, phs, slots in SHAPES:
    for _ in range(12):   # positives: same entity + numbers, two phrasings
        e = R.choice(pool); nums = {k: NUM[k]() for k in slots}
        p1, p2 = R.sample(phs, 2)
        add(fill(p1, e, nums), fill(p2, e, nums), 1, "reworded_reply")
    nneg = 12 if not slots else 6
    for _ in range(nneg):  # different entity, same shape
        e1, e2 = R.sample(pool, 2); nums = {k: NUM[k]() for k in slots}
        p1 = R.choice(phs); p2 = p1 if R.random() < 0.7 else R.choice(phs)
        add(fill(p1, e1, nums), fill(p2, e2, nums), 0, "different_answer")
    if slots:
        for _ in range(7):  # same entity, one number changed
            e = R.choice(pool); n1 = {k: NUM[k]() for k in slots}; n2 = dict(n1)
            k = R.choice(slots)
            while n2[k] == n1[k]: n2[k] = NUM[k]()
            p1 = R.choice(phs); p2 = p1 if R.random() < 0.6 else R.choice(phs)
            add(fill(p1, e, n1), fill(p2, e, n2), 0, "different_numbers")

for name, items in LISTS.items():
    for phs in LISTPH:
        k = phs[0].count("{")
        for _ in range(4):
            it = R.sample(items, k); p1, p2 = R.sample(phs, 2)
            add(p1.format(*it), p2.format(*it), 1, "reworded_reply")
        for _ in range(3):
            it = R.sample(items, k); perm = it[:]
            while perm == it: R.shuffle(perm)
            p1 = R.choice(phs); p2 = p1 if R.random() < 0.6 else R.choice(phs)
            add(p1.format(*it), p2.format(*perm), 0, "reordered_list")
        for _ in range(1):
            it = R.sample(items, k + 1); it2 = it[:k]; j = R.randrange(k); it2[j] = it[k]
            p1 = R.choice(phs); add(p1.format(*it[:k]), p1.format(*it2), 0, "different_answer")

for a, b in itertools.combinations(ACKS, 2):
    if R.random() < 0.33: add(a, b, 1, "acknowledgment")
# an acknowledgment is not the same as a reply that names something
content = [fill(R.choice(phs), R.choice(pool), {k: NUM[k]() for k in slots}) for pool, phs, slots in SHAPES for _ in range(2)]
for c in R.sample(content, 60): add(R.choice(ACKS), c, 0, "different_answer")

R.shuffle(out)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_replies.jsonl")
with open(path, "w") as f:
    for r in out: f.write(json.dumps(r, ensure_ascii=False) + "\n")

# validate
from collections import Counter
recs = [json.loads(l) for l in open(path)]
assert all(set(r) == {"a", "b", "label", "kind"} and r["a"] != r["b"] and r["label"] in (0, 1) for r in recs)
assert len({tuple(sorted((r["a"], r["b"]))) for r in recs}) == len(recs)
print("shapes:", len(SHAPES) + len(LISTPH), "total:", len(recs))
print("labels:", dict(Counter(r["label"] for r in recs)))
print("kinds:", dict(Counter((r["label"], r["kind"]) for r in recs)))
