#!/usr/bin/env python3
"""Build train_singles.jsonl for the cache-checker cross-encoder.

Sources (all written for this project):
  1. hand/*.txt  - hand-written seed questions with hand-written paraphrases and
                   look-alike negatives (see parse_hand.py for the format).
  2. derived     - extra pairs between two hand-written variants of the same seed
                   (paraphrase x paraphrase = positive, paraphrase x negative variant = negative).
  3. templates   - slot-filled families defined below (look-alike negatives and
                   keep-meaning positives).
Stdlib only. Deterministic (random seed 0).
"""
import json, os, random, re, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parse_hand import load_all  # noqa: E402

RNG = random.Random(0)

# ---------------------------------------------------------------- surface noise
def typo(s, rng):
    words = s.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not idx:
        return s
    i = rng.choice(idx)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    op = rng.choice(["swap", "drop", "double"])
    if op == "swap":
        w = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    elif op == "drop":
        w = w[:j] + w[j + 1:]
    else:
        w = w[:j] + w[j] + w[j:]
    words[i] = w
    return " ".join(words)

PREFIXES = ["hey, ", "quick question: ", "hi! ", "so ", "um ", "ok ", "hello, "]
WH_PREFIXES = ["please tell me ", "can you tell me ", "i want to know ", "i was wondering "]
WH = ("what", "how", "who", "which", "where", "when", "why")

def style(s, rng, allow_prefix=True):
    """Random meaning-preserving surface style (casing, punctuation, filler)."""
    s = s.strip()
    r = rng.random()
    if allow_prefix and r < 0.12:
        p = rng.choice(PREFIXES + (WH_PREFIXES if s.lower().startswith(WH) else []))
        s = p + s[0].lower() + s[1:]
    r = rng.random()
    if r < 0.35:
        s = s.lower().rstrip("?.!")
    elif r < 0.7:
        s = s[0].upper() + s[1:]
        if not s.endswith("?") and not s.endswith("."):
            s += "?"
    elif r < 0.8:
        s = s.rstrip("?") + "??"
    return s

def contract(s):
    for a, b in [("what is", "what's"), ("how is", "how's"), ("do not", "don't"), ("i am", "i'm"),
                 ("it is", "it's"), ("can not", "can't"), ("does not", "doesn't"), ("is not", "isn't")]:
        s = re.sub(r"\b%s\b" % a, b, s, flags=re.I)
    return s

# ---------------------------------------------------------------- slot lists
COUNTRIES = ["france", "germany", "italy", "spain", "portugal", "austria", "australia", "canada", "mexico",
             "brazil", "argentina", "chile", "peru", "japan", "china", "india", "pakistan", "egypt", "kenya",
             "nigeria", "morocco", "turkey", "greece", "poland", "sweden", "norway", "finland", "denmark",
             "ireland", "iceland", "vietnam", "thailand", "indonesia", "south korea", "new zealand",
             "switzerland", "belgium", "netherlands", "colombia", "ethiopia"]
CITIES = ["paris", "london", "berlin", "madrid", "rome", "lisbon", "vienna", "prague", "amsterdam", "dublin",
          "tokyo", "osaka", "seoul", "bangkok", "singapore", "sydney", "melbourne", "toronto", "vancouver",
          "chicago", "boston", "seattle", "new york", "los angeles", "miami", "mexico city", "cairo",
          "istanbul", "athens", "munich", "milan", "barcelona", "edinburgh", "copenhagen", "stockholm"]
LANGS = ["spanish", "french", "german", "italian", "portuguese", "japanese", "korean", "mandarin", "arabic",
         "russian", "dutch", "swedish", "greek", "turkish", "hindi", "polish"]
WORDS = ["hello", "thank you", "good night", "see you later", "excuse me", "i love you", "how much is this",
         "where is the bathroom", "happy birthday", "good luck", "cheers", "i'm sorry", "welcome", "goodbye"]
ANIMALS = ["dog", "cat", "rabbit", "hamster", "parrot", "guinea pig", "horse", "ferret", "chicken", "tortoise"]
PET_FOODS = ["grapes", "bananas", "strawberries", "cheese", "onions", "garlic", "carrots", "rice", "peanut butter",
             "watermelon", "eggs", "apples", "tomatoes", "avocado", "popcorn", "blueberries", "cucumber", "bread"]
PREG_FOODS = ["sushi", "brie", "shrimp", "smoked salmon", "deli meat", "runny eggs", "tuna", "feta cheese",
              "liver", "blue cheese", "hot dogs", "raw oysters", "swordfish", "pineapple"]
SOFTWARE = ["python", "docker", "node.js", "google chrome", "spotify", "zoom", "steam", "vs code", "git",
            "java", "firefox", "slack", "postgresql", "blender", "obs studio"]
OSES = ["windows", "mac", "linux", "ubuntu", "a chromebook"]
DEV_TASKS = ["take a screenshot", "find my ip address", "change the wallpaper", "check how much storage is left",
             "turn on bluetooth", "record my screen", "connect to a vpn", "change my password", "check for updates",
             "clear the clipboard", "see which apps use the most battery", "zip a folder", "show hidden files"]
THINGS_PROCON = ["renting an apartment", "electric cars", "homeschooling", "taking a gap year", "living in a big city",
                 "working from home", "nuclear energy", "index funds", "online learning", "buying a timeshare",
                 "a four day work week", "solar panels", "owning a dog", "freelancing", "studying abroad",
                 "a credit card", "a standing desk", "joining a union", "a high deductible health plan", "wood floors"]
DISHES = ["lasagna", "chili", "brownies", "banana bread", "pizza dough", "mac and cheese", "meatballs", "curry",
          "pancakes", "shepherd's pie", "burritos", "carrot cake", "fried rice", "ramen", "stuffed peppers"]
DIETS = ["vegan", "vegetarian", "keto", "gluten-free", "dairy-free", "low-carb", "paleo", "low-sodium"]
INGREDIENTS = ["eggs", "milk", "butter", "flour", "sugar", "cheese", "oil", "yeast", "baking powder", "onions"]

# ---------------------------------------------------------------- template families
def fix_articles(s):
    s = re.sub(r"\b([Aa]) (8|11|18|eight|eleven|eighteen|hour)\b", lambda m: m.group(1) + "n " + m.group(2), s)
    return s

def pick(r, lst):
    """Choose with exactly one draw from r, so equal seeds give aligned choices."""
    return lst[int(r.random() * len(lst))]

def other(rng, lst, x):
    while True:
        y = rng.choice(lst)
        if y != x:
            return y

class Family:
    """sample(rng)->state; render(state, r)->text; mutators: [(fn(state, rng)->state2, kind)]."""
    def __init__(self, name, sample, render, mutators, n_pos, n_neg):
        self.name, self.sample, self.render = name, sample, render
        self.mutators, self.n_pos, self.n_neg = mutators, n_pos, n_neg

FAMILIES = []
def family(name, n_pos, n_neg):
    def deco(fn):
        sample, render, muts = fn()
        FAMILIES.append(Family(name, sample, render, muts, n_pos, n_neg))
        return fn
    return deco

def swap_key(key, values):
    def m(st, rng):
        s2 = dict(st); s2[key] = other(rng, values, st[key]); return s2
    return m

def flip_key(key):
    def m(st, rng):
        s2 = dict(st); s2[key] = not st[key]; return s2
    return m

# 1 capitals
@family("capital", 25, 25)
def _():
    P = ["what is the capital of {X}", "what's the capital city of {X}", "which city is the capital of {X}",
         "tell me the capital of {X}", "name the capital of {X}", "capital of {X}?", "what city is {X}'s capital"]
    return (lambda rng: {"X": rng.choice(COUNTRIES)},
            lambda s, r: pick(r, P).format(X=s["X"]),
            [(swap_key("X", COUNTRIES), "entity_swap")])

# 2 translation
@family("translate", 30, 30)
def _():
    P = ["how do you say '{W}' in {L}", "what is '{W}' in {L}", "translate '{W}' into {L}",
         "how would i say {W} in {L}", "what's the {L} for '{W}'", "{W} in {L}?", "how to say {W} in {L}"]
    return (lambda rng: {"W": rng.choice(WORDS), "L": rng.choice(LANGS)},
            lambda s, r: pick(r, P).format(W=s["W"], L=s["L"]),
            [(swap_key("L", LANGS), "entity_swap"), (swap_key("W", WORDS), "entity_swap")])

# 3 pet foods
@family("pet_food", 30, 35)
def _():
    P = ["can {A}s eat {F}", "can my {A} eat {F}", "is it safe for {A}s to eat {F}",
         "is it ok to feed my {A} {F}", "are {A}s allowed to eat {F}", "can i give my {A} {F}"]
    return (lambda rng: {"A": rng.choice(ANIMALS), "F": rng.choice(PET_FOODS)},
            lambda s, r: pick(r, P).format(A=s["A"], F=s["F"]),
            [(swap_key("A", ANIMALS), "entity_swap"), (swap_key("F", PET_FOODS), "entity_swap")])

# 4 pregnancy foods (plus breastfeeding scope)
@family("pregnancy_food", 20, 25)
def _():
    P = {False: ["is it safe to eat {F} while pregnant", "can pregnant women eat {F}",
                 "can i have {F} when i'm pregnant", "is eating {F} ok during pregnancy"],
         True: ["is it safe to eat {F} while breastfeeding", "can breastfeeding mothers eat {F}",
                "can i have {F} when i'm breastfeeding", "is eating {F} ok while nursing"]}
    return (lambda rng: {"F": rng.choice(PREG_FOODS), "bf": False},
            lambda s, r: pick(r, P[s["bf"]]).format(F=s["F"]),
            [(swap_key("F", PREG_FOODS), "entity_swap"), (flip_key("bf"), "scope_change")])

# 5 OS tasks
@family("os_task", 35, 40)
def _():
    P = ["how do i {T} on {O}", "how can i {T} on {O}", "what's the way to {T} on {O}", "how to {T} on {O}",
         "steps to {T} on {O}", "what is the easiest way to {T} on {O}"]
    return (lambda rng: {"T": rng.choice(DEV_TASKS), "O": rng.choice(OSES)},
            lambda s, r: pick(r, P).format(T=s["T"], O=s["O"]),
            [(swap_key("O", OSES), "entity_swap"), (swap_key("O", OSES), "entity_swap"),
             (swap_key("T", DEV_TASKS), "related")])

# 6 install / uninstall
@family("install", 30, 40)
def _():
    V = {True: ["install", "set up", "download and install"], False: ["uninstall", "remove"]}
    P = ["how do i {V} {S} on {O}", "how to {V} {S} on {O}", "what's the right way to {V} {S} on {O}",
         "how can i {V} {S} on {O}", "{V} {S} on {O} - how?"]
    def render(s, r):
        p = pick(r, P); v = pick(r, V[s["inst"]])
        return p.format(V=v, S=s["S"], O=s["O"])
    return (lambda rng: {"inst": rng.random() < 0.6, "S": rng.choice(SOFTWARE), "O": rng.choice(OSES)},
            render,
            [(flip_key("inst"), "negation"), (flip_key("inst"), "negation"),
             (swap_key("S", SOFTWARE), "entity_swap"), (swap_key("O", OSES), "entity_swap")])

# 7 feature toggles
TOGGLES = {"dark mode": ["iphone", "android", "windows 11", "mac", "chrome", "youtube"],
           "notifications": ["whatsapp", "instagram", "slack", "gmail", "tiktok"],
           "location services": ["iphone", "android", "windows 11", "mac"],
           "automatic updates": ["windows 10", "windows 11", "mac", "android", "chrome"],
           "two-factor authentication": ["facebook", "instagram", "amazon", "github", "paypal", "discord"],
           "read receipts": ["whatsapp", "imessage", "signal", "messenger"],
           "autoplay": ["youtube", "netflix", "spotify", "facebook"],
           "night light": ["windows 10", "windows 11"],
           "airplane mode": ["iphone", "android", "windows 11"]}
@family("toggle", 35, 45)
def _():
    V = {True: ["turn on", "enable", "switch on", "activate"], False: ["turn off", "disable", "switch off", "deactivate"]}
    P = ["how do i {V} {F} on {X}", "how can i {V} {F} in {X}", "{V} {F} {X}", "where do i {V} {F} on {X}",
         "what's the way to {V} {F} on {X}", "how to {V} {F} on {X}"]
    def render(s, r):
        p = pick(r, P); v = pick(r, V[s["on"]])
        return p.format(V=v, F=s["F"], X=s["X"])
    def sample(rng):
        f = rng.choice(sorted(TOGGLES)); return {"on": rng.random() < 0.5, "F": f, "X": rng.choice(TOGGLES[f])}
    def swap_plat(st, rng):
        lst = TOGGLES[st["F"]]
        if len(lst) < 2: return None
        s2 = dict(st); s2["X"] = other(rng, lst, st["X"]); return s2
    def swap_feat(st, rng):
        cands = [f for f in TOGGLES if f != st["F"] and st["X"] in TOGGLES[f]]
        if not cands: return None
        s2 = dict(st); s2["F"] = rng.choice(sorted(cands)); return s2
    return sample, render, [(flip_key("on"), "negation"), (flip_key("on"), "negation"),
                            (swap_plat, "entity_swap"), (swap_feat, "related")]

# 8 pros / cons
@family("pros_cons", 30, 35)
def _():
    W = {True: ["advantages", "benefits", "pros", "upsides"], False: ["disadvantages", "drawbacks", "cons", "downsides"]}
    P = ["what are the {W} of {T}", "{W} of {T}?", "list the {W} of {T}", "what are some {W} of {T}",
         "tell me the main {W} of {T}"]
    def render(s, r):
        p = pick(r, P); w = pick(r, W[s["good"]]); return p.format(W=w, T=s["T"])
    return (lambda rng: {"good": rng.random() < 0.5, "T": rng.choice(THINGS_PROCON)}, render,
            [(flip_key("good"), "negation"), (flip_key("good"), "negation"), (swap_key("T", THINGS_PROCON), "entity_swap")])

# 9 comparatives: converse = positive, order swap / antonym = negative
COMPARE = [
    (["russia", "canada", "china", "brazil", "australia", "india", "argentina", "algeria", "mexico", "egypt"], "bigger", "smaller"),
    (["jupiter", "saturn", "neptune", "uranus", "earth", "venus", "mars", "mercury"], "bigger", "smaller"),
    (["the nile", "the amazon", "the yangtze", "the mississippi", "the danube", "the rhine", "the volga", "the congo"], "longer", "shorter"),
    (["an elephant", "a hippo", "a rhino", "a giraffe", "a bison", "a moose", "a polar bear", "a walrus"], "heavier", "lighter"),
    (["rome", "athens", "jerusalem", "cairo", "beijing", "london", "paris", "istanbul"], "older", "younger"),
    (["k2", "everest", "kilimanjaro", "mont blanc", "denali", "aconcagua", "mount fuji", "matterhorn"], "taller", "shorter"),
]
@family("compare", 0, 40)
def _():
    def sample(rng):
        i = rng.randrange(len(COMPARE)); ents = COMPARE[i][0]
        a = rng.choice(ents); b = other(rng, ents, a)
        return {"i": i, "A": a, "B": b, "form": rng.randrange(2), "adj": True}
    def render(s, r):
        ents, adj, ant = COMPARE[s["i"]]
        word = adj if s["adj"] else ant
        if s["form"] == 0:
            return "is {} {} than {}".format(s["A"], word, s["B"])
        return "which is {}, {} or {}".format(word, s["A"], s["B"])
    def swap_b(st, rng):
        ents = [e for e in COMPARE[st["i"]][0] if e not in (st["A"], st["B"])]
        return dict(st, B=rng.choice(ents))
    def swap_dir(st, rng):
        return dict(st, A=st["B"], B=st["A"]) if st["form"] == 0 else None
    return sample, render, [(swap_dir, "direction_swap"), (flip_key("adj"), "negation"), (swap_b, "entity_swap")]

def compare_positives(rng, n):
    """Converse and reorder positives: 'is A bigger than B' == 'is B smaller than A'; 'which is bigger, A or B' == '..., B or A'."""
    out = []
    for _ in range(n):
        ents, adj, ant = rng.choice(COMPARE)
        a = rng.choice(ents); b = other(rng, ents, a)
        if rng.random() < 0.5:
            out.append(("is {} {} than {}".format(a, adj, b), "is {} {} than {}".format(b, ant, a), 1, "reorder"))
        else:
            w = adj if rng.random() < 0.5 else ant
            out.append(("which is {}, {} or {}".format(w, a, b), "which is {}, {} or {}".format(w, b, a), 1, "reorder"))
    return out

# 10 travel directions (direction matters)
ROUTE_GROUPS = [(["paris", "london", "brussels", "amsterdam", "berlin", "munich", "vienna", "prague", "zurich", "milan",
                  "rome", "barcelona", "madrid", "lyon"], ["train", "bus", "car"]),
                (["boston", "new york", "philadelphia", "washington dc", "montreal", "toronto", "chicago"], ["train", "bus", "car"]),
                (["tokyo", "osaka", "kyoto", "hiroshima", "nagoya"], ["train", "bus", "car"]),
                (["sydney", "melbourne", "canberra", "brisbane"], ["train", "bus", "car"]),
                (["dover", "calais", "dublin", "holyhead", "helsinki", "tallinn", "stockholm"], ["ferry", "car", "bus"])]
@family("travel_route", 30, 40)
def _():
    M = {"train": ["by train", "by rail", "on the train"], "bus": ["by bus", "on the bus", "by coach"],
         "car": ["by car", "driving"], "ferry": ["by ferry", "by boat"]}
    P = ["how do i get from {A} to {B} {M}", "what's the best way to get from {A} to {B} {M}",
         "how do i get to {B} from {A} {M}", "traveling from {A} to {B} {M}, how?", "how can i travel from {A} to {B} {M}"]
    def render(s, r):
        p = pick(r, P); m = pick(r, M[s["M"]]); return p.format(A=s["A"], B=s["B"], M=m)
    def sample(rng):
        g = rng.randrange(len(ROUTE_GROUPS)); cities, modes = ROUTE_GROUPS[g]
        a = rng.choice(cities); return {"g": g, "A": a, "B": other(rng, cities, a), "M": rng.choice(modes)}
    def swap_dir(st, rng): return dict(st, A=st["B"], B=st["A"])
    def swap_b(st, rng):
        b = other(rng, ROUTE_GROUPS[st["g"]][0], st["B"]); return None if b == st["A"] else dict(st, B=b)
    def swap_m(st, rng):
        modes = ROUTE_GROUPS[st["g"]][1]; return dict(st, M=other(rng, modes, st["M"])) if len(modes) > 1 else None
    return sample, render, [(swap_dir, "direction_swap"), (swap_dir, "direction_swap"), (swap_b, "entity_swap"),
                            (swap_m, "scope_change")]

# 11 distance (order does NOT matter -> reorder positives; other city -> negative)
@family("distance", 25, 20)
def _():
    P = ["how far is {A} from {B}", "what is the distance between {A} and {B}", "distance from {A} to {B}?",
         "how many km between {A} and {B}", "how far apart are {A} and {B}"]
    def render(s, r):
        p = pick(r, P); a, b = (s["A"], s["B"]) if r.random() < 0.5 else (s["B"], s["A"])
        return p.format(A=a, B=b)
    def sample(rng):
        a = rng.choice(CITIES); return {"A": a, "B": other(rng, CITIES, a)}
    def swap_b(st, rng):
        b = other(rng, CITIES, st["B"]); return None if b == st["A"] else dict(st, B=b)
    return sample, render, [(swap_b, "entity_swap")]

# 12 unit conversion
UNITS = [(["miles", "mi"], ["kilometers", "km", "kilometres"]), (["pounds", "lbs"], ["kilograms", "kg"]),
         (["feet", "ft"], ["meters", "metres", "m"]), (["inches", "in"], ["centimeters", "cm"]),
         (["degrees fahrenheit", "fahrenheit", "f"], ["degrees celsius", "celsius", "c"]),
         (["cups"], ["milliliters", "ml"]), (["ounces", "oz"], ["grams", "g"]), (["gallons"], ["liters", "litres"])]
NUMS = [2, 3, 5, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 250, 500]
@family("unit_convert", 35, 45)
def _():
    P = ["convert {N} {U1} to {U2}", "how many {U2} is {N} {U1}", "what is {N} {U1} in {U2}", "{N} {U1} to {U2}",
         "{N} {U1} in {U2}?", "how much is {N} {U1} in {U2}"]
    def render(s, r):
        p = pick(r, P); pair = UNITS[s["i"]]
        src, dst = (pair[0], pair[1]) if s["fwd"] else (pair[1], pair[0])
        # abbreviations only for the target side to keep text natural
        u1 = src[0] if r.random() < 0.7 else pick(r, src)
        u2 = pick(r, dst)
        return p.format(N=s["N"], U1=u1, U2=u2)
    return (lambda rng: {"i": rng.randrange(len(UNITS)), "N": rng.choice(NUMS), "fwd": rng.random() < 0.5}, render,
            [(swap_key("N", NUMS), "number_change"), (swap_key("N", NUMS), "number_change"), (flip_key("fwd"), "direction_swap")])

# 13 time units
TIME_U = ["seconds", "minutes", "hours", "days", "weeks", "months"]
TIME_S = ["minute", "hour", "day", "week", "month", "year", "leap year", "decade", "century"]
TIME_OK = {"seconds": TIME_S[0:6], "minutes": TIME_S[1:6], "hours": TIME_S[2:7], "days": TIME_S[3:9],
           "weeks": ["month", "year", "leap year", "decade"], "months": ["year", "decade", "century"]}
@family("time_units", 25, 30)
def _():
    P = ["how many {U} are in a {S}", "how many {U} in a {S}", "how many {U} does a {S} have", "a {S} has how many {U}",
         "number of {U} in one {S}?", "tell me how many {U} there are in a {S}"]
    def sample(rng):
        u = rng.choice(TIME_U); return {"U": u, "S": rng.choice(TIME_OK[u])}
    def swap_s(st, rng):
        lst = TIME_OK[st["U"]]; return dict(st, S=other(rng, lst, st["S"])) if len(lst) > 1 else None
    def swap_u(st, rng):
        c = [u for u in TIME_U if u != st["U"] and st["S"] in TIME_OK[u]]
        return dict(st, U=rng.choice(c)) if c else None
    return sample, lambda s, r: pick(r, P).format(U=s["U"], S=s["S"]), [(swap_s, "number_change"), (swap_u, "number_change")]

# 14 percent
@family("percent", 25, 30)
def _():
    P = ["what is {P} percent of {N}", "what's {P}% of {N}", "calculate {P} percent of {N}", "{P}% of {N}?",
         "how much is {P} percent of {N}", "find {P}% of {N}"]
    PS = [5, 10, 12, 15, 18, 20, 25, 30, 35, 40, 45, 60, 75, 80, 90]
    NS = [40, 60, 80, 120, 150, 200, 240, 250, 300, 360, 450, 500, 640, 750, 1200]
    return (lambda rng: {"P": rng.choice(PS), "N": rng.choice(NS)},
            lambda s, r: pick(r, P).format(P=s["P"], N=s["N"]),
            [(swap_key("P", PS), "number_change"), (swap_key("N", NS), "number_change")])

# 15 events by year
EVENTS = ["world series", "nba finals", "stanley cup", "tour de france", "eurovision song contest",
          "champions league", "wimbledon men's singles title", "masters tournament", "ballon d'or",
          "nobel peace prize", "super bowl", "oscar for best picture"]
@family("event_year", 30, 40)
def _():
    P = ["who won the {E} in {Y}", "{E} {Y} winner", "who was the winner of the {Y} {E}", "tell me who won the {E} in {Y}",
         "who won the {Y} {E}?", "who took home the {E} in {Y}"]
    YS = list(range(1988, 2024))
    return (lambda rng: {"E": rng.choice(EVENTS), "Y": rng.choice(YS)},
            lambda s, r: pick(r, P).format(E=s["E"], Y=s["Y"]),
            [(lambda st, rng: dict(st, Y=st["Y"] + rng.choice([-1, 1, -2, 2, -10, 10])), "number_change"),
             (swap_key("Y", YS), "number_change"), (swap_key("E", EVENTS), "entity_swap")])

# 16 baby age (digits vs words are the same)
NUMWORD = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
           10: "ten", 11: "eleven", 12: "twelve", 15: "fifteen", 18: "eighteen"}
@family("baby_age", 30, 35)
def _():
    P = ["how much should a {N} month old sleep", "how many hours of sleep does a {N} month old need",
         "{N} month old baby sleep hours?", "how long should a {N}-month-old baby sleep each day",
         "how much sleep does my {N} month old need"]
    Q = ["how much should a {N} month old eat", "how many ounces of milk should a {N} month old drink",
         "how many naps should a {N} month old take"]
    def render(s, r):
        p = pick(r, P if s["q"] < 0 else [Q[s["q"]]])
        n = NUMWORD[s["N"]] if r.random() < 0.4 else str(s["N"])
        return p.format(N=n)
    ns = sorted(NUMWORD)
    return (lambda rng: {"N": rng.choice(ns), "q": -1}, render,
            [(swap_key("N", ns), "number_change"), (swap_key("N", ns), "number_change"),
             (lambda st, rng: dict(st, q=rng.randrange(3)), "related")])

# 17 per day / per week
PERIOD_STEMS = ["how many hours should i study", "how many eggs is it safe to eat", "how many minutes of exercise does an adult need",
                "how many cups of coffee is it safe to drink", "how much protein should i eat", "how much should i spend on groceries",
                "how many times should i water a snake plant", "how many steps should i walk", "how much screen time is healthy for a child",
                "how many calories does a house cat need", "how many hours can a 15 year old work", "how much fiber should i eat",
                "how many times should i post on instagram", "how much alcohol is safe to drink", "how many hours should i practice piano"]
PERIODS = {"day": ["per day", "a day", "each day", "every day"], "week": ["per week", "a week", "each week", "every week"],
           "month": ["per month", "a month", "each month"]}
@family("per_period", 30, 35)
def _():
    def render(s, r):
        return "{} {}".format(s["stem"], pick(r, PERIODS[s["T"]]))
    return (lambda rng: {"stem": rng.choice(PERIOD_STEMS), "T": rng.choice(["day", "day", "week", "month"])}, render,
            [(swap_key("T", ["day", "week", "month"]), "number_change")])

# 18 age groups
GROUPS = {"child": ["a child", "a kid", "a young child"], "adult": ["an adult", "a grown-up", "an adult person"],
          "teen": ["a teenager", "a teen"], "newborn": ["a newborn", "a newborn baby"], "senior": ["a senior", "an elderly person"]}
@family("age_group", 30, 35)
def _():
    STEMS = ["what is a normal resting heart rate for {W}", "how much sleep does {W} need", "how much water should {W} drink a day",
             "how much vitamin d does {W} need", "what is a normal body temperature for {W}", "how many calories does {W} need per day",
             "what is a normal blood pressure for {W}", "how much iron does {W} need"]
    def render(s, r):
        return STEMS[s["stem"]].format(W=pick(r, GROUPS[s["G"]]))
    return (lambda rng: {"stem": rng.randrange(len(STEMS)), "G": rng.choice(sorted(GROUPS))}, render,
            [(swap_key("G", sorted(GROUPS)), "scope_change"), (swap_key("G", sorted(GROUPS)), "scope_change"),
             (lambda st, rng: dict(st, stem=other(rng, list(range(len(STEMS))), st["stem"])), "related")])

# 19 diet-qualified recipes
@family("diet_recipe", 30, 40)
def _():
    P = ["easy {D}{X} recipe", "how do i make {D}{X}", "simple recipe for {D}{X}", "what's a good {D}{X} recipe",
         "how to cook {D}{X} at home", "give me a recipe for {D}{X}"]
    def render(s, r):
        return pick(r, P).format(D=(s["D"] + " ") if s["D"] else "", X=s["X"])
    return (lambda rng: {"D": rng.choice(DIETS), "X": rng.choice(DISHES)}, render,
            [(swap_key("D", DIETS), "scope_change"), (swap_key("D", DIETS), "scope_change"),
             (lambda st, rng: dict(st, D=""), "scope_change"), (swap_key("X", DISHES), "entity_swap")])

# 20 baking without an ingredient
BAKES = ["brownies", "banana bread", "pancakes", "carrot cake", "chocolate chip cookies", "muffins", "waffles",
         "cornbread", "pie crust", "a sponge cake", "scones", "cupcakes"]
FREE = {"eggs": "egg-free", "milk": "milk-free", "butter": "butter-free", "sugar": "sugar-free", "oil": "oil-free",
        "baking powder": None, "flour": "flourless"}
@family("bake_without", 30, 40)
def _():
    P = ["how do i make {X} without {I}", "{X} recipe with no {I}", "how to make {X} without using {I}",
         "how can i bake {X} without {I}", "{F} {X} recipe?"]
    def render(s, r):
        p = pick(r, P)
        if not s["without"]:
            return "how do i make {} with extra {}".format(s["X"], s["I"]) if r.random() < 0.5 else \
                   "{} recipe with lots of {}".format(s["X"], s["I"])
        if "{F}" in p and not FREE[s["I"]]:
            p = P[0]
        return p.format(X=s["X"], I=s["I"], F=FREE[s["I"]] or "")
    return (lambda rng: {"X": rng.choice(BAKES), "I": rng.choice(sorted(FREE)), "without": True}, render,
            [(swap_key("I", sorted(FREE)), "entity_swap"), (swap_key("I", sorted(FREE)), "entity_swap"),
             (swap_key("X", BAKES), "entity_swap"), (flip_key("without"), "negation")])

# 21 regional superlatives
SUPER = {"lake": (["largest", "biggest"], ["smallest"]), "country": (["largest", "biggest"], ["smallest"]),
         "river": (["longest"], ["shortest"]), "mountain": (["highest", "tallest"], ["lowest"]),
         "desert": (["largest", "biggest"], ["smallest"]), "island": (["largest", "biggest"], ["smallest"]),
         "city": (["largest", "biggest", "most populous"], ["least populous"])}
REGIONS = ["africa", "europe", "asia", "south america", "north america", "oceania", "the middle east", "scandinavia"]
@family("superlative", 35, 45)
def _():
    P = ["what is the {S} {T} in {R}", "which {T} is the {S} in {R}", "{R}'s {S} {T}?", "name the {S} {T} in {R}",
         "what's the {S} {T} in {R}", "tell me the {S} {T} in {R}"]
    def render(s, r):
        p = pick(r, P); sup = pick(r, SUPER[s["T"]][0 if s["top"] else 1])
        return p.format(S=sup, T=s["T"], R=s["R"])
    return (lambda rng: {"T": rng.choice(sorted(SUPER)), "R": rng.choice(REGIONS), "top": rng.random() < 0.75}, render,
            [(flip_key("top"), "scope_change"), (swap_key("R", REGIONS), "entity_swap"), (swap_key("T", sorted(SUPER)), "entity_swap")])

# 22 cheapest / most expensive
PLACES = ["the us", "canada", "the uk", "australia", "germany", "spain", "italy", "france", "japan", "mexico", "texas", "california", "florida"]
@family("cheap_expensive", 30, 35)
def _():
    S = {True: ["cheapest", "least expensive", "most affordable"], False: ["most expensive", "priciest", "least affordable"]}
    P = ["what is the {S} city to live in {C}", "which city in {C} is the {S} to live in", "{S} city to live in {C}?",
         "where is the {S} place to live in {C}", "name the {S} city in {C} to live in"]
    def render(s, r):
        p = pick(r, P); return p.format(S=pick(r, S[s["cheap"]]), C=s["C"])
    return (lambda rng: {"cheap": rng.random() < 0.6, "C": rng.choice(PLACES)}, render,
            [(flip_key("cheap"), "scope_change"), (flip_key("cheap"), "scope_change"), (swap_key("C", PLACES), "entity_swap")])

# 23 first / last / second holder of an office
OFFICES = [("emperor", "rome"), ("emperor", "china"), ("emperor", "japan"), ("king", "england"), ("king", "france"),
           ("king", "spain"), ("president", "the united states"), ("president", "france"), ("president", "mexico"),
           ("prime minister", "india"), ("prime minister", "canada"), ("prime minister", "the uk"), ("tsar", "russia"),
           ("chancellor", "germany"), ("pharaoh", "egypt")]
@family("first_last", 30, 40)
def _():
    ORD = {"first": ["first", "very first"], "last": ["last", "final"], "second": ["second"]}
    P = ["who was the {O} {R} of {C}", "name the {O} {R} of {C}", "who served as the {O} {R} of {C}",
         "who was {C}'s {O} {R}", "tell me who the {O} {R} of {C} was"]
    def render(s, r):
        p = pick(r, P); r_, c = OFFICES[s["k"]]; o = pick(r, ORD[s["O"]])
        return p.format(O=o, R=r_, C=c)
    def swap_c(st, rng):
        role = OFFICES[st["k"]][0]
        c = [i for i, (ro, _) in enumerate(OFFICES) if ro == role and i != st["k"]]
        return dict(st, k=rng.choice(c)) if c else None
    return (lambda rng: {"k": rng.randrange(len(OFFICES)), "O": rng.choice(["first", "first", "last"])}, render,
            [(swap_key("O", ["first", "last", "second"]), "scope_change"), (swap_key("O", ["first", "last", "second"]), "scope_change"),
             (swap_c, "entity_swap")])

# 24 before / after an event
EAT_EVENTS = ["a run", "a workout", "a swim", "a blood test", "a long flight", "an exam", "a marathon", "bed", "a yoga class", "a colonoscopy"]
@family("before_after", 25, 35)
def _():
    P = ["what should i eat before {E}", "what's good to eat before {E}", "best foods to eat before {E}",
         "what to eat before {E}?", "what food should i have before {E}"]
    def render(s, r):
        p = pick(r, P); return p.format(E=s["E"]).replace("before", "after") if not s["before"] else p.format(E=s["E"])
    return (lambda rng: {"E": rng.choice(EAT_EVENTS), "before": rng.random() < 0.6}, render,
            [(flip_key("before"), "scope_change"), (flip_key("before"), "scope_change"), (swap_key("E", EAT_EVENTS), "entity_swap")])

# 25 start / stop
STARTSTOP = [("start", "stop", "sharing my location on an iphone"), ("start", "stop", "sharing my screen on zoom"),
             ("start", "stop", "recording a meeting in teams"), ("follow", "unfollow", "someone on tiktok"),
             ("subscribe to", "unsubscribe from", "a youtube channel"), ("start", "stop", "syncing photos to icloud"),
             ("archive", "unarchive", "a chat in whatsapp"), ("pin", "unpin", "a message in slack"),
             ("block", "unblock", "a number on android"), ("start", "stop", "a windows service from the command line"),
             ("hide", "unhide", "a column in excel"), ("lock", "unlock", "cells in google sheets")]
@family("start_stop", 30, 40)
def _():
    P = ["how do i {V} {X}", "how can i {V} {X}", "what are the steps to {V} {X}", "{V} {X} - how?", "how to {V} {X}",
         "is there a way to {V} {X}"]
    def render(s, r):
        v_on, v_off, x = STARTSTOP[s["k"]]
        return pick(r, P).format(V=v_on if s["on"] else v_off, X=x)
    return (lambda rng: {"k": rng.randrange(len(STARTSTOP)), "on": rng.random() < 0.5}, render,
            [(flip_key("on"), "negation"), (flip_key("on"), "negation"),
             (lambda st, rng: dict(st, k=other(rng, list(range(len(STARTSTOP))), st["k"])), "related")])

# 26 increase / decrease
ADJUST = ["the volume on my tv", "the brightness on my laptop", "the water pressure in my shower", "the humidity in my house",
          "the ph of my garden soil", "the temperature on my water heater", "the font size in chrome", "the chlorine level in my pool",
          "the speed of a youtube video", "the mouse sensitivity in windows", "the resolution of an image", "my dog's appetite",
          "the ringer volume on my iphone", "the size of the taskbar icons"]
@family("increase_decrease", 35, 45)
def _():
    V = {True: ["increase", "raise", "turn up"], False: ["decrease", "lower", "reduce", "turn down"]}
    P = ["how do i {V} {X}", "how can i {V} {X}", "what's the best way to {V} {X}", "how to {V} {X}", "easiest way to {V} {X}?"]
    def render(s, r):
        p = pick(r, P); v = pick(r, V[s["up"]])
        if v.startswith("turn") and not any(w in s["X"] for w in ("volume", "brightness", "temperature", "speed")):
            v = V[s["up"]][0]
        return p.format(V=v, X=s["X"])
    return (lambda rng: {"up": rng.random() < 0.5, "X": rng.choice(ADJUST)}, render,
            [(flip_key("up"), "negation"), (flip_key("up"), "negation"), (swap_key("X", ADJUST), "related")])

# 27 best X for a group
GEAR = ["camera", "acoustic guitar", "programming language", "road bike", "telescope", "chess book", "sewing machine",
        "drone", "snowboard", "3d printer", "skateboard", "microphone for podcasting", "running shoe", "watercolor set", "keyboard for piano practice"]
USERS = {"beginner": ["beginners", "a beginner", "someone just starting out", "a complete novice"],
         "pro": ["professionals", "experts", "advanced users", "a professional"],
         "kid": ["kids", "children", "a child"]}
@family("best_for", 35, 45)
def _():
    P = ["what is the best {X} for {U}", "which {X} is best for {U}", "best {X} for {U}?", "recommend a {X} for {U}",
         "what {X} should i get for {U}", "what's a good {X} for {U}"]
    def render(s, r):
        p = pick(r, P); return p.format(X=s["X"], U=pick(r, USERS[s["U"]]))
    return (lambda rng: {"X": rng.choice(GEAR), "U": rng.choice(["beginner", "beginner", "pro", "kid"])}, render,
            [(swap_key("U", sorted(USERS)), "scope_change"), (swap_key("U", sorted(USERS)), "scope_change"), (swap_key("X", GEAR), "entity_swap")])

# 28 currency
CURR = [["us dollars", "usd", "dollars"], ["euros", "eur"], ["british pounds", "gbp", "pounds sterling"], ["japanese yen", "yen", "jpy"],
        ["canadian dollars", "cad"], ["swiss francs", "chf"], ["indian rupees", "inr", "rupees"], ["mexican pesos", "mxn"],
        ["australian dollars", "aud"]]
@family("currency", 30, 40)
def _():
    P = ["how much is {N} {C1} in {C2}", "convert {N} {C1} to {C2}", "{N} {C1} to {C2}", "what's {N} {C1} worth in {C2}",
         "{N} {C1} in {C2}?", "what is {N} {C1} in {C2} today"]
    NS = [10, 20, 50, 75, 100, 200, 250, 500, 1000, 5000]
    def render(s, r):
        p = pick(r, P); return p.format(N=s["N"], C1=pick(r, CURR[s["a"]]), C2=pick(r, CURR[s["b"]]))
    def sample(rng):
        a = rng.randrange(len(CURR)); return {"a": a, "b": other(rng, list(range(len(CURR))), a), "N": rng.choice(NS)}
    def swap_b(st, rng):
        b = other(rng, list(range(len(CURR))), st["b"]); return None if b == st["a"] else dict(st, b=b)
    return sample, render, [(swap_key("N", NS), "number_change"), (lambda st, rng: dict(st, a=st["b"], b=st["a"]), "direction_swap"),
                            (swap_b, "entity_swap")]

# 29 food storage
STORE_FOODS = ["cooked rice", "raw chicken", "ground beef", "hard boiled eggs", "cooked pasta", "opened wine", "fresh salmon",
               "homemade soup", "cut watermelon", "leftover pizza", "opened milk", "cooked shrimp", "bread", "tofu"]
@family("food_storage", 30, 40)
def _():
    P = {"fridge": ["how long does {F} last in the fridge", "how long can i keep {F} in the refrigerator",
                    "how many days is {F} good for in the fridge", "{F} shelf life in the fridge?", "how long does {F} keep in the fridge"],
         "freezer": ["how long does {F} last in the freezer", "how long can i keep {F} frozen",
                     "how many months is {F} good for in the freezer", "{F} shelf life in the freezer?", "how long does {F} keep in the freezer"],
         "counter": ["how long can {F} sit out at room temperature", "how long can {F} stay out of the fridge",
                     "how many hours is {F} safe unrefrigerated", "{F} left on the counter - how long is it ok?", "how long does {F} keep at room temperature"]}
    def render(s, r):
        return pick(r, P[s["W"]]).format(F=s["F"])
    return (lambda rng: {"F": rng.choice(STORE_FOODS), "W": rng.choice(["fridge", "fridge", "freezer", "counter"])}, render,
            [(swap_key("W", ["fridge", "freezer", "counter"]), "scope_change"), (swap_key("F", STORE_FOODS), "entity_swap")])

# 30 calories in N items
CAL_FOODS = [("egg", "eggs"), ("banana", "bananas"), ("slice of pizza", "slices of pizza"), ("apple", "apples"),
             ("avocado", "avocados"), ("glass of red wine", "glasses of red wine"), ("chocolate chip cookie", "chocolate chip cookies"),
             ("tablespoon of olive oil", "tablespoons of olive oil"), ("bagel", "bagels"), ("can of beer", "cans of beer")]
@family("calories", 30, 40)
def _():
    P = ["how many calories are in {N} {F}", "how many calories in {N} {F}", "calories in {N} {F}?", "how many kcal do {N} {F} have",
         "what's the calorie count for {N} {F}"]
    def render(s, r):
        p = pick(r, P); n = s["N"]; word = r.random() < 0.4
        nn = NUMWORD.get(n, str(n)) if word else str(n)
        one, many = CAL_FOODS[s["f"]]
        if n == 1:
            p = p.replace("do {N} {F} have", "does {N} {F} have")
            nn = "one" if word else ("a" if r.random() < 0.5 else "1")
            if nn == "a" and one[0] in "aeiou":
                nn = "an"
        return p.format(N=nn, F=one if n == 1 else many)
    ns = [1, 2, 3, 4, 5, 6, 10, 12]
    return (lambda rng: {"f": rng.randrange(len(CAL_FOODS)), "N": rng.choice(ns)}, render,
            [(swap_key("N", ns), "number_change"), (swap_key("N", ns), "number_change"),
             (lambda st, rng: dict(st, f=other(rng, list(range(len(CAL_FOODS))), st["f"])), "entity_swap")])

# ---------------------------------------------------------------- assembly
import difflib

def norm(s):
    return " ".join(re.sub(r"[^\w\s'%$-]", " ", s.lower()).split())

def token_diff(a, b):
    ta, tb = norm(a).split(), norm(b).split()
    sm = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in sm.get_opcodes() if op != "equal")

def template_pairs(rng, scale=1.0):
    out = []
    for fam in FAMILIES:
        seen = set()
        tries = 0
        n_pos, n_neg = int(round(fam.n_pos * scale)), int(round(fam.n_neg * scale))
        pos = neg = 0
        while (pos < n_pos or neg < n_neg) and tries < 5000:
            tries += 1
            st = fam.sample(rng)
            k1, k2 = rng.randrange(10**9), rng.randrange(10**9)
            if pos < n_pos and (neg >= n_neg or rng.random() < 0.5):
                a, b = fix_articles(fam.render(st, random.Random(k1))), fix_articles(fam.render(st, random.Random(k2)))
                if norm(a) == norm(b):
                    continue
                kind = "minor_word" if token_diff(a, b) <= 2 else "paraphrase"
                label = 1
            elif neg < n_neg:
                fn, kind = rng.choice(fam.mutators)
                st2 = fn(st, rng)
                if st2 is None or st2 == st:
                    continue
                a = fix_articles(fam.render(st, random.Random(k1)))
                b = fix_articles(fam.render(st2, random.Random(k1 if rng.random() < 0.75 else k2)))
                if norm(a) == norm(b):
                    continue
                label = 0
            else:
                continue
            key = frozenset([norm(a), norm(b)])
            if key in seen:
                continue
            seen.add(key)
            a, b = style(a, rng), style(b, rng)
            if label == 1 and rng.random() < 0.08:
                b = typo(b, rng)
            out.append({"a": a, "b": b, "label": label, "kind": kind, "src": "template:" + fam.name})
            if label: pos += 1
            else: neg += 1
    for a, b, l, k in compare_positives(rng, int(round(40 * scale))):
        out.append({"a": style(a, rng), "b": style(b, rng), "label": l, "kind": k, "src": "template:compare"})
    return out

POS_TAGS, NEG_TAGS = "phmt", "neusr"

def derived_pairs(pairs, rng, pos_rate=0.9, neg_rate=0.6):
    """Pairs between two hand-written variants of the same seed."""
    by_seed = {}
    for p in pairs:
        by_seed.setdefault(p["a"], []).append(p)
    out = []
    for seed in sorted(by_seed):
        vs = by_seed[seed]
        P = [v for v in vs if v["tag"] in POS_TAGS]
        N = [v for v in vs if v["tag"] in "neus"]
        if len(P) >= 2 and rng.random() < pos_rate:
            x, y = rng.sample(P, 2)
            kind = "heavy_paraphrase" if "h" in (x["tag"], y["tag"]) else "paraphrase"
            out.append({"a": x["b"], "b": y["b"], "label": 1, "kind": kind, "src": "hand_derived"})
        if P and N and rng.random() < neg_rate:
            x, y = rng.choice(P), rng.choice(N)
            out.append({"a": x["b"], "b": y["b"], "label": 0, "kind": y["kind"], "src": "hand_derived"})
    return out

def main():
    rng = random.Random(0)
    _, hand = load_all(os.path.join(HERE, "hand"))
    for h in hand:
        h["src"] = "hand"
    recs = hand + derived_pairs(hand, rng) + template_pairs(rng, scale=float(os.environ.get("TEMPLATE_SCALE", "0.7")))
    # dedupe on unordered normalized pair; drop label conflicts and self-pairs
    groups = {}
    for r in recs:
        na, nb = r["a"].strip(), r["b"].strip()
        if na == nb:
            if r["label"] == 0:
                print("WARNING self-pair with label 0:", r, file=sys.stderr)
            continue
        la, lb = norm(na), norm(nb)
        key = frozenset([la, lb]) if la != lb else frozenset([na, nb])
        groups.setdefault(key, []).append(r)
    final = []
    for key, rs in groups.items():
        if len({r["label"] for r in rs}) > 1:
            print("WARNING conflicting labels, dropped:", rs[0]["a"], "|", rs[0]["b"], file=sys.stderr)
            continue
        final.append(rs[0])
    final.sort(key=lambda r: (r["src"], r["a"], r["b"]))
    rng2 = random.Random(0)
    for r in final:
        if rng2.random() < 0.5:
            r["a"], r["b"] = r["b"], r["a"]
    rng2.shuffle(final)
    with open(os.path.join(HERE, "train_singles.jsonl"), "w", encoding="utf-8") as f:
        for r in final:
            f.write(json.dumps({"a": r["a"], "b": r["b"], "label": r["label"], "kind": r["kind"]}, ensure_ascii=False) + "\n")
    src = Counter(r["src"].split(":")[0] for r in final)
    print("total", len(final), "labels", dict(Counter(r["label"] for r in final)))
    print("by source", dict(src))
    print("kinds", dict(Counter(r["kind"] for r in final).most_common()))
    print("by source x label", dict(Counter((r["src"].split(":")[0], r["label"]) for r in final)))

if __name__ == "__main__":
    main()
