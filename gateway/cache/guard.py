"""The precision guard: is the cached question's answer also right for the incoming question?

A cosine threshold alone cannot tell "Which mushrooms are edible?" from "Which mushrooms are not
edible?" (cosine 0.97 with MiniLM) while still matching real paraphrases (often 0.70-0.90). Look-alike
questions with different answers differ in a few *words that carry the answer*; this module extracts
those words from both questions and compares them. Every rule is a plain comparison with a reason a
person can read in a log line or a response header, and none of them knows any particular question:

    rule             rejects when the two questions differ in ...
    negation         the count of negation cues (not, n't, no, never, without, cannot, non-, -free)
    affix negation   a word and its negated form (legal/illegal, toxic/non-toxic, harmful/harmless)
    number           the numbers: digits, number words, ordinals, roman numerals (values only, so
                     "second" == "2nd" == "II" and "fifteen" == "15")
    operator         arithmetic operators next to numbers (2+2 vs 2*2, "times" vs "plus")
    date             months, weekdays, seasons, today/tomorrow, am/pm
    unit             units and currencies (km/miles, cups/tablespoons, USD/EUR, %, hours/days)
    quoted           a quoted string of one question missing from the other
    entity           proper nouns, acronyms, code identifiers present in one question only
    order            two named things swapped around to/from/into/than/in ("100 F in C" vs
                     "100 C in F", "to the airport from downtown" vs "downtown from the airport")
    question type    what-thing / who / when / where / why / how: two different kinds asked
    antonym          the two sides of an antonym pair (increase/decrease, before/after, buy/sell)
    degree           superlatives and comparatives (largest/smallest, last, most/least, min/max)
    template change  in a look-alike pair (most of the word sequence shared): a content word replaced
                     by an unrelated one ("sodium" -> "potassium"), a qualifier inserted ("vice
                     president"), or named things swapped ("Spain beat Italy" / "Italy beat Spain")

Equivalences that keep paraphrases passing: contractions ("doesn't" == "does not"), light stemming
("boils" == "boil"), derivational forms ("differ" == "difference"), spelling variants and one-letter
typos in long words (same first letter), joined compounds ("wi fi" == "wifi"), and a small table of
everyday synonyms (buy/purchase, fix/repair, yearly/annual, ...). A guard rejection is a cache miss,
never an error: it costs a model call, while a wrong hit costs a wrong answer.

Entry point: ``check(cached_question, new_question) -> (ok, reason)``; features of a question are
computed once and memoised (the cached side repeats).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from gateway.cache.normalize import _TRANSLATE

# ---------------------------------------------------------------------------------------- lexicons

STOPWORDS = frozenset(
    """
    a an the and or but if then else of to in on at by for with from into onto about as than so such
    is am are was were be been being do does did done doing have has had having will would shall should
    can could may might must ought i me my mine myself we us our ours you your yours he him his she her
    hers it its they them their theirs this that these those there here what which who whom whose when
    where why how there's it's also just really actually basically please pls plz kindly
    so now still even very quite too some any all each every other another own same
    tell explain describe show give let know want need help get got getting go going make made like
    way ways thing things something anything someone somebody one ones able possible lot lots bit
    up out off over again further once while during through between both either whether until
    s t d ll m re ve don y im happen happens happened occur occurs occurred
    """.split()
)
# Words that only make a question polite or chatty; dropped before any comparison.
FILLERS = frozenset("please pls plz kindly actually basically really just".split())
# Greetings and thanks at either end of a message are dropped before anything else ("Hey, how do I
# ...", "... please, thanks!"); in the middle ("how do I say hello in Japanese") they are content.
_GREETING_START = re.compile(
    r"^(?:\s*(?:hey|hi|hello|ok|okay|so|well|um|uh|yo|thanks|thank you)\b[\s,!.:;-]*)+", re.IGNORECASE
)
_GREETING_END = re.compile(r"(?:[\s,;-]*\b(?:please|thanks|thank you|thx|ty|cheers)\b[\s.!?]*)+$", re.IGNORECASE)

NEGATION_WORDS = frozenset("not no never none nobody nothing nowhere neither nor without cannot non nope noone".split())
# Contractions written without the apostrophe (chat style): word -> expansion.
BARE_CONTRACTIONS = {
    **{w + "nt": w + " not" for w in "do does did is are was were should could would have has had must need".split()},
    **{w + "s": w + " is" for w in "what that how who where when why".split()},
    **{w + "re": w + " are" for w in ("you", "they")},
    **{"cant": "can not", "wont": "will not", "aint": "is not", "ive": "i have"},  # the irregular ones
}
NEGATING_PREFIXES = ("non", "un", "in", "im", "il", "ir", "dis", "de", "anti")

_UNITS = {
    # length
    "mm": "mm",
    "millimeter": "mm",
    "millimetre": "mm",
    "cm": "cm",
    "centimeter": "cm",
    "centimetre": "cm",
    "meter": "m",
    "metre": "m",
    "km": "km",
    "kilometer": "km",
    "kilometre": "km",
    "kms": "km",
    "mile": "mile",
    "mi": "mile",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "inch": "inch",
    "inches": "inch",
    "yard": "yard",
    "yd": "yard",
    "nm": "nm",
    "nanometer": "nm",
    "lightyear": "lightyear",
    # mass
    "mg": "mg",
    "milligram": "mg",
    "gram": "g",
    "kg": "kg",
    "kilo": "kg",
    "kilogram": "kg",
    "lb": "lb",
    "lbs": "lb",
    "pound": "lb",
    "oz": "oz",
    "ounce": "oz",
    "ton": "ton",
    "tonne": "ton",
    "stone": "stone",
    # volume
    "ml": "ml",
    "milliliter": "ml",
    "millilitre": "ml",
    "liter": "l",
    "litre": "l",
    "gallon": "gallon",
    "gal": "gallon",
    "quart": "quart",
    "pint": "pint",
    "cup": "cup",
    "tablespoon": "tbsp",
    "tbsp": "tbsp",
    "teaspoon": "tsp",
    "tsp": "tsp",
    "floz": "floz",
    # temperature, angle
    "celsius": "celsius",
    "centigrade": "celsius",
    "fahrenheit": "fahrenheit",
    "kelvin": "kelvin",
    "degree": "degree",
    "radian": "radian",
    # time
    "millisecond": "ms",
    "ms": "ms",
    "sec": "s",
    "secs": "s",
    "minute": "minute",
    "mins": "minute",
    "hour": "hour",
    "hr": "hour",
    "hrs": "hour",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
    "yr": "year",
    "yrs": "year",
    "decade": "decade",
    "century": "century",
    "centuries": "century",
    "millennium": "millennium",
    "hourly": "hour",
    "daily": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annual": "year",
    "annually": "year",
    # data, speed, energy, power
    "bit": "bit",
    "byte": "byte",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "kib": "kib",
    "mib": "mib",
    "gib": "gib",
    "kilobyte": "kb",
    "megabyte": "mb",
    "gigabyte": "gb",
    "terabyte": "tb",
    "mph": "mph",
    "kph": "kph",
    "kmh": "kph",
    "calorie": "kcal",
    "kcal": "kcal",
    "cal": "kcal",
    "joule": "joule",
    "kwh": "kwh",
    "watt": "watt",
    "kw": "kw",
    "volt": "volt",
    "amp": "amp",
    "ampere": "amp",
    "hz": "hz",
    "ghz": "ghz",
    "mhz": "mhz",
    "psi": "psi",
    "bar": "bar",
    "pascal": "pascal",
    "mmhg": "mmhg",
    # currency, percent
    "$": "usd",
    "usd": "usd",
    "dollar": "usd",
    "buck": "usd",
    "€": "eur",
    "eur": "eur",
    "euro": "eur",
    "£": "gbp",
    "gbp": "gbp",
    "sterling": "gbp",
    "¥": "jpy",
    "yen": "jpy",
    "jpy": "jpy",
    "yuan": "cny",
    "rmb": "cny",
    "cny": "cny",
    "₹": "inr",
    "rupee": "inr",
    "inr": "inr",
    "peso": "peso",
    "franc": "chf",
    "chf": "chf",
    "cad": "cad",
    "aud": "aud",
    "bitcoin": "btc",
    "btc": "btc",
    "ruble": "rub",
    "won": "krw",
    "%": "percent",
    "percent": "percent",
    "percentage": "percent",
    "pct": "percent",
    "bps": "bps",
    "basis": "bps",
}
# Time units are compared only when both questions name one ("3 hours" vs "3 days"): "time of year"
# or "how many minutes" vs "how long" are rewordings, not a change of unit.
TIME_UNITS = frozenset("ms s minute hour day week month year decade century millennium".split())
# One-letter (or ambiguous) units count only right after a number: "200 g", "5 m", "30 s", "10 min".
_UNITS_AFTER_NUMBER = {
    "g": "g",
    "m": "m",
    "l": "l",
    "s": "s",
    "c": "celsius",
    "f": "fahrenheit",
    "k": "kelvin",
    "min": "minute",
    "second": "s",
    "h": "hour",
    "w": "watt",
    "v": "volt",
}

MONTHS = {
    m: m[:3] for m in "january february march april may june july august september october november december".split()
}
MONTHS.update(
    {
        "jan": "jan",
        "feb": "feb",
        "apr": "apr",
        "jun": "jun",
        "jul": "jul",
        "aug": "aug",
        "sep": "sep",
        "sept": "sep",
        "oct": "oct",
        "nov": "nov",
        "dec": "dec",
    }
)
_AMBIGUOUS_MONTHS = {"may", "march"}  # only when capitalised mid-sentence or next to a number
DATE_WORDS = {
    w: w
    for w in "monday tuesday wednesday thursday friday saturday sunday weekend weekday "
    "today tomorrow yesterday tonight spring summer autumn winter morning afternoon "
    "evening night midnight noon christmas easter".split()
}

_SMALL_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12, "dozen": 12}
_NUMBER_WORDS = frozenset(_SMALL_NUMBERS) | frozenset(_TENS) | frozenset(_SCALES)
_ORDINALS = {
    w: i + 1
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()
    )
}
_ORDINALS.update(
    {
        "thirtieth": 30,
        "fortieth": 40,
        "fiftieth": 50,
        "hundredth": 100,
        "thousandth": 1000,
        "half": 0.5,
        "quarter": 0.25,
        "twice": 2,
    }
)
_ROMAN = {
    "ii": 2,
    "iii": 3,
    "iv": 4,
    "vi": 6,
    "vii": 7,
    "viii": 8,
    "ix": 9,
    "xi": 11,
    "xii": 12,
    "xiii": 13,
    "xiv": 14,
    "xv": 15,
    "xvi": 16,
    "xx": 20,
}
# "one" is often a pronoun ("the second one", "which one"): not a number after these words.
_ONE_PRONOUN_BEFORE = frozenset(
    "the this that which each every any some another no other only new old "
    "good right best last first second same what a an".split()
)

OPERATOR_WORDS = {
    "plus": "+",
    "minus": "-",
    "times": "*",
    "multiplied": "*",
    "divided": "/",
    "over": None,
    "mod": "%",
    "modulo": "%",
}

# Degree words: superlatives and comparatives, mapped onto a canonical word so that near-synonyms
# (largest/biggest) agree. Any difference between the two questions rejects.
DEGREE = {}
for canon, words in {
    "largest": "largest biggest greatest",
    "smallest": "smallest tiniest littlest",
    "highest": "highest tallest",
    "lowest": "lowest",
    "longest": "longest",
    "shortest": "shortest",
    "fastest": "fastest quickest speediest",
    "slowest": "slowest",
    "cheapest": "cheapest",
    "most_expensive": "priciest dearest",
    "oldest": "oldest earliest",
    "newest": "newest youngest",
    "best": "best",
    "worst": "worst",
    "most": "most",
    "least": "least fewest",
    "hottest": "hottest warmest",
    "coldest": "coldest coolest",
    "richest": "richest wealthiest",
    "poorest": "poorest",
    "heaviest": "heaviest",
    "lightest": "lightest",
    "deepest": "deepest",
    "strongest": "strongest",
    "weakest": "weakest",
    "easiest": "easiest simplest",
    "hardest": "hardest toughest",
    "safest": "safest",
    "healthiest": "healthiest",
    "closest": "closest nearest",
    "farthest": "farthest furthest",
    "max": "max maximum maximal maximize",
    "min": "min minimum minimal minimize",
    "last": "last final latest",
    "next": "next upcoming",
    "previous": "previous prior",
    "bigger": "bigger larger greater",
    "smaller": "smaller",
    "higher": "higher taller",
    "lower_c": "lower",
    "longer": "longer",
    "shorter": "shorter",
    "faster": "faster quicker",
    "slower": "slower",
    "cheaper": "cheaper",
    "better": "better",
    "worse": "worse",
    "more": "more",
    "less": "less fewer",
    "older": "older",
    "newer": "newer younger",
    "hotter": "hotter warmer",
    "colder": "colder cooler",
    "heavier": "heavier",
    "lighter": "lighter",
    "stronger": "stronger",
    "weaker": "weaker",
    "easier": "easier simpler",
    "harder": "harder",
    "safer": "safer",
}.items():
    for w in words.split():
        DEGREE[w] = canon
# "-est" words that are not superlatives (for the generic superlative fallback).
_NOT_SUPERLATIVE = frozenset(
    "interest test rest request suggest honest forest contest protest invest digest harvest modest guest "
    "quest chest west nest pest vest arrest manifest priest attest detest divest ingest infest conquest "
    "unrest midwest northwest southwest inquest bequest pretest latest best fest crest zest jest lest "
    "tempest earnest dearest everest budapest bucharest".split()
)

# Antonym groups: (side A words, side B words). Rejects only when both questions use the group and
# the sides differ (a swap); adding or dropping such a word is left to the other rules.
ANTONYMS = [
    ("increase raise boost grow rise higher gain", "decrease reduce lower drop shrink cut decline fall"),
    ("up", "down"),
    ("before pre prior earlier", "after post later afterwards"),
    ("buy purchase", "sell"),
    ("add insert", "remove delete drop"),
    ("enable activate", "disable deactivate"),
    ("import", "export"),
    ("upload", "download"),
    ("encrypt encode", "decrypt decode"),
    ("compress zip", "decompress unzip extract"),
    ("open", "close"),
    ("start begin", "end finish"),
    ("push", "pull"),
    ("input", "output"),
    ("true", "false"),
    ("positive", "negative"),
    ("inner", "outer"),
    ("upper uppercase", "lower lowercase"),
    ("left", "right"),
    ("north northern", "south southern"),
    ("east eastern", "west western"),
    ("hot warm heat", "cold cool chill"),
    ("high", "low"),
    ("fast quick", "slow"),
    ("long", "short"),
    ("old", "new young"),
    ("early", "late"),
    ("above", "below beneath"),
    ("over", "under"),
    ("inside indoor interior", "outside outdoor exterior"),
    ("win", "lose"),
    ("send", "receive"),
    ("read", "write"),
    ("install", "uninstall remove"),
    ("ascending asc", "descending desc"),
    ("horizontal horizontally", "vertical vertically"),
    ("internal", "external"),
    ("male men man boy", "female women woman girl"),
    ("mother mom", "father dad"),
    ("day daytime", "night nighttime"),
    ("good", "bad"),
    ("advantage pro benefit", "disadvantage con drawback risk"),
    ("cause reason", "effect consequence result"),
    ("light bright", "dark"),
    ("wet", "dry"),
    ("rich", "poor"),
    ("cheap inexpensive", "expensive costly"),
    ("easy simple", "hard difficult"),
    ("safe", "dangerous unsafe"),
    ("major", "minor"),
    ("top", "bottom"),
    ("front", "back rear"),
    ("forward", "backward"),
    ("arrive arrival", "depart departure"),
    ("enter entry", "exit leave"),
    ("login log", "logout"),
    ("upgrade", "downgrade"),
    ("subscribe", "unsubscribe"),
    ("accept approve", "reject decline deny"),
    ("allow permit", "block forbid ban"),
    ("include", "exclude"),
    ("strength", "weakness"),
    ("beginner novice newbie", "expert advanced professional pro"),
    ("child kid children kids baby toddler", "adult grown"),
    ("vegan vegetarian", "meat"),
    ("sweet", "sour salty bitter savory"),
    ("thick", "thin"),
    ("wide", "narrow"),
    ("soft", "hard firm"),
    ("raw", "cooked"),
    ("fresh", "frozen"),
    ("public", "private"),
    ("static", "dynamic"),
    ("synchronous sync", "asynchronous async"),
    ("client", "server"),
    ("mutable", "immutable"),
    ("lend", "borrow"),
    ("import", "export"),
    ("debit", "credit"),
    ("asset", "liability"),
    ("profit", "loss"),
    ("income revenue", "expense cost"),
    ("bull bullish", "bear bearish"),
    ("acid acidic", "base alkaline basic"),
    ("born birth", "die death dead"),
    ("sunrise", "sunset"),
]

# Everyday near-synonyms: words in one group are treated as the same word by the changed-word rule.
SYNONYMS = [
    "buy purchase",
    "fix repair mend",
    "big large huge",
    "small little tiny",
    "fast quick speedy rapid",
    "car automobile vehicle",
    "make create build",
    "start begin",
    "end finish",
    "remove delete erase",
    "yearly annual annually",
    "monthly",
    "daily",
    "film movie",
    "phone smartphone cellphone mobile",
    "laptop notebook computer pc",
    "reset reboot restart",
    "avoid prevent stop",
    "cancel stop terminate end",
    "country nation",
    "kid child",
    "teen teenager adolescent",
    "adult grown",
    "tyre tire",
    "colour color",
    "aeroplane airplane plane",
    "centre center",
    "calculate compute work figure",
    "change modify alter update edit",
    "get obtain receive",
    "use utilize",
    "show display",
    "find locate",
    "check test verify",
    "need require",
    "help assist",
    "picture photo image",
    "shop store",
    "rubbish trash garbage",
    "sofa couch",
    "holiday vacation",
    "flat apartment",
    "lift elevator",
    "petrol gas gasoline",
    "chips fries",
    "biscuit cookie",
    "mum mom",
    "error problem issue",
    "price cost",
    "choose pick select",
    "ripe ready",
    "doctor physician",
    "medicine medication drug",
    "illness disease sickness",
    "tummy stomach belly",
    "job work",
    "correct right",
    "wrong incorrect",
    "near close",
    "quickly fast",
    "learn study",
    "crucial important",
    "typical normal usual",
    "kitty kitten",
    "puppy pup",
    "connect link",
    "hand carry",
    "bag luggage baggage",
    "reduce lower lessen",
    "increase raise boost",
    "website site",
    "app application",
    "directory folder",
    "refund reimbursement",
    "subscription plan",
    "bring take carry",
    "effective good",
    "travel go get",
    "display show",
    "speak talk",
    "permit allow",
    "simple easy",
    "convert turn transform",
    "merge combine",
    "main primary principal",
]

# Common abbreviations folded onto one spelling before comparison (both questions).
ABBREVIATIONS = {
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "k8s": "kubernetes",
    "chem": "chemical",
    "info": "information",
    "pic": "picture",
    "pics": "pictures",
    "approx": "approximately",
    "temp": "temperature",
    "min": "minimum",
    "max": "maximum",
    "sqrt": "square root",
    "avg": "average",
    "govt": "government",
    "dept": "department",
    "yrs": "years",
    "u": "you",
    "ur": "your",
    "r": "are",
    "plz": "please",
    "pls": "please",
    "thx": "thanks",
    "w/": "with",
    "w/o": "without",
    "vs": "versus",
    "db": "database",
    "repo": "repository",
    "config": "configuration",
    "env": "environment",
    "dir": "directory",
    "auth": "authentication",
    "dict": "dictionary",
    "dicts": "dictionaries",
    "func": "function",
    "funcs": "functions",
    "var": "variable",
    "vars": "variables",
    "arg": "argument",
    "args": "arguments",
    "param": "parameter",
    "params": "parameters",
    "str": "string",
    "int": "integer",
    "char": "character",
    "chars": "characters",
    "lib": "library",
    "libs": "libraries",
    "pkg": "package",
    "msg": "message",
    "img": "image",
    "docs": "documentation",
    "addr": "address",
    "dev": "development",
    "prod": "production",
    "admin": "administrator",
    "stats": "statistics",
    "exp": "exponent",
    "fridge": "refrigerator",
    "telly": "television",
    "tv": "television",
    "bday": "birthday",
    "b-day": "birthday",
    "ppl": "people",
    "nyc": "new york city",
    "la": "los angeles",
    "sf": "san francisco",
    "britain": "uk",
    "british": "uk",
    "england": "uk",
    "usa": "usa",
    "america": "usa",
    "american": "usa",
}
# Multi-word phrases folded before tokenising (lower-cased text).
PHRASES = [
    (r"\bunited states(?: of america)?\b", "USA"),
    (r"\bunited kingdom\b", "UK"),
    (r"\bgreat britain\b", "UK"),
    (r"\bmost recent\b", "latest"),
    (r"\bhow come\b", "why"),
    (
        r"\bwhat(?:'s| is| are| was| were)? (?:makes?|made|causes?|caused|determines?|leads? to|led to|"
        r"(?:the )?(?:reasons?|causes?)(?: for| why| of)?)\b",
        "why",
    ),
    (r"\bwhat does (?:that|this) mean\b", "why"),  # "... shows E42, what does that mean?"
    (r"\b(?:in )?(?:what|which) year\b", "when"),
    (r"\bwhat date\b", "when"),
    (
        r"\b(?:the |a |an )?(?:best|good|right|proper|correct|recommended|effective|easy|simple) (?:way|method|technique|steps?|process) (?:to|for)\b",
        "how to",
    ),
    (r"\bwhat'?s the (?:way|method|technique|process) (?:to|for)\b", "how to"),
    (r"\bwhat are the steps (?:to|for)\b", "how to"),
    (r"\bdivided by\b", "divided"),
    (r"\bmultiplied by\b", "times"),
    (r"\bsquare root\b", "sqrt"),
    (r"\bper cent\b", "percent"),
    (r"\bfl\.? ?oz\b", "floz"),
    (r"\bkm/h\b", "kph"),
    (r"\blight ?years?\b", "lightyear"),
    (r"\bgrown[- ]ups?\b", "adult"),
    (r"\bcarry[- ]on\b", "hand luggage"),
    (r"\bwi[- ]?fi\b", "wifi"),
    (r"\be[- ]mail\b", "email"),
    (r"\bon-?line\b", "online"),
    (r"\bcan not\b", "cannot"),
    (r"\bfirst aid\b", "firstaid"),
    (r"\bfirst of all\b", ""),
    (r"\bat first\b", "initially"),
]
_PHRASES = [(re.compile(p, re.IGNORECASE), r) for p, r in PHRASES]

_QUANTITY_HOW = frozenset(
    "many much long often frequently far old fast big large tall early late soon high deep heavy wide hot cold".split()
)
_AUX_OR_DET = frozenset("do does did is are was were can could should would will has have the a an".split())
_DETERMINERS = frozenset("the my your his her its our their this that these those".split())

LOOKALIKE_RATIO = 0.6  # template_ratio above which a pair counts as "same sentence, a slot changed"
_ACRONYM_DOTS = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_QUOTED = re.compile(r'"([^"\n]{1,200})"|(?<![\w])\'([^\'\n]{1,200})\'(?![\w])|`([^`\n]{1,200})`')
_IDENTIFIER = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+\b|\b\w*_\w+\b|\b[a-z]+[A-Z]\w*\b|\b\w+\(\)")
_TOKEN = re.compile(
    r"(?P<num>\d+(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)(?P<suffix>st|nd|rd|th|s|k|m|bn|am|pm)?\b"
    r"|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)?)"
    r"|(?P<sym>[$€£¥₹%+*/=^×÷])"
)
_OPERATOR = re.compile(r"(?<=[\d\s)])([+*/^×÷=]|-(?=\s*\d))(?=\s*[\d(a-z])", re.IGNORECASE)


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light suffix stripper: enough for plural, -ing, -ed and a trailing e to agree."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suf in ("ing", "ed"):
        if w.endswith(suf) and len(w) - len(suf) >= 3 and not w.endswith("eed"):
            base = w[: -len(suf)]
            if re.search(r"[aeiouy]", base):
                w = base
                if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                    w = w[:-1]  # running -> run
                break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_SYNONYM_OF: dict[str, int] = {}
for _i, _group in enumerate(SYNONYMS):
    for _w in _group.split():
        _SYNONYM_OF.setdefault(stem(_w), _i)

_ANTONYM_SIDE: dict[str, list[tuple[int, int]]] = {}
for _i, (_a, _b) in enumerate(ANTONYMS):
    for _side, _words in enumerate((_a, _b)):
        for _w in _words.split():
            _ANTONYM_SIDE.setdefault(stem(_w), []).append((_i, _side))

_DERIVATIONAL = (
    "s",
    "es",
    "ed",
    "ing",
    "er",
    "ers",
    "or",
    "ors",
    "ly",
    "ion",
    "ions",
    "ation",
    "ations",
    "ence",
    "ences",
    "ance",
    "ent",
    "ant",
    "al",
    "ally",
    "ical",
    "ic",
    "ity",
    "ment",
    "ments",
    "ness",
    "ize",
    "ise",
    "ized",
    "ised",
    "ful",
    "ous",
    "ive",
    "able",
    "ible",
    "y",
    "ie",
)


def _edit1(a: str, b: str) -> bool:
    """True when a and b differ by one substitution, insertion, deletion or adjacent swap."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if la > lb:
        a, b = b, a
    for i in range(len(b)):
        if b[:i] + b[i + 1 :] == a:
            return True
    return False


def words_equivalent(x: str, y: str) -> bool:
    """Same word for the changed-word rule: stem, derivation, typo, spelling variant or synonym."""
    if x == y:
        return True
    sx, sy = stem(x), stem(y)
    if sx == sy:
        return True
    short, long_ = (sx, sy) if len(sx) <= len(sy) else (sy, sx)
    if len(short) >= 4 and long_.startswith(short) and (long_[len(short) :] in _DERIVATIONAL or len(short) >= 6):
        return True
    if min(len(x), len(y)) >= 6 and x[0] == y[0] and not (x.isdigit() or y.isdigit()) and _edit1(x, y):
        return True  # a typo in a long word; the first letter is rarely mistyped (ethanol/methanol)
    gx, gy = _SYNONYM_OF.get(sx), _SYNONYM_OF.get(sy)
    return gx is not None and gx == gy


# ---------------------------------------------------------------------------------- features


@dataclass(frozen=True)
class Features:
    text: str  # casefolded, whitespace collapsed
    words: tuple[str, ...]  # lower-case word tokens, contractions expanded, abbreviations folded
    aligned: tuple[str, ...]  # stems of all words, for aligning the two questions
    content: tuple[str, ...]  # content words (no stopwords, numbers, units, dates, wh-words)
    keyed: tuple[tuple[int, str], ...]  # (position in words, key) of content words, entities, units
    negations: int
    numbers: tuple[float, ...]  # sorted
    operators: tuple[str, ...]  # sorted
    dates: frozenset
    units: tuple[str, ...]  # in order of appearance
    measured: frozenset  # units given with a quantity ("5 km", "20 dollars", "$300", "15%")
    quoted: frozenset
    entities: tuple[str, ...]  # in order of appearance, lower-case
    wh: frozenset
    degree: frozenset
    antonyms: dict


def _number_value(text: str) -> float:
    v = float(text.replace(",", ""))
    return int(v) if v.is_integer() else v


def _scan(raw: str) -> tuple[list[tuple[str, str, bool, bool]], list[float], list[str]]:
    """Tokens as (kind, lower text, capitalised, sentence_initial) plus numbers from digits."""
    tokens: list[tuple[str, str, bool, bool]] = []
    numbers: list[float] = []
    date_extra: list[str] = []
    sentence_start = True
    pos = 0
    for m in _TOKEN.finditer(raw):
        between = raw[pos : m.start()]
        if re.search(r"[.?!:;\n]\s*$", between) and pos > 0:
            sentence_start = True
        pos = m.end()
        if m.group("num") is not None:
            value = _number_value(m.group("num"))
            suffix = (m.group("suffix") or "").lower()
            if suffix == "k":
                value *= 1000
            elif suffix in ("m", "bn") and re.match(r"\s", raw[m.end() : m.end() + 1] or " "):
                value *= 10**6 if suffix == "m" else 10**9
            elif suffix in ("am", "pm"):
                date_extra.append(suffix)
            numbers.append(value)
            tokens.append(("num", m.group("num"), False, sentence_start))
        elif m.group("word") is not None:
            w = m.group("word")
            tokens.append(("word", w, w[0].isupper(), sentence_start))
        else:
            tokens.append(("sym", m.group("sym"), False, sentence_start))
        sentence_start = False
    return tokens, numbers, date_extra


def _expand(word: str) -> list[str]:
    """Split contractions: "doesn't" -> ["does", "not"], "australia's" -> ["australia"]."""
    w = word.lower()
    if "'" in w:
        head, tail = w.split("'", 1)
        if tail == "t" and head.endswith("n"):
            base = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}.get(head[:-1], head[:-1])
            return [base, "not"]
        extra = {"re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}.get(tail)
        return [head] + ([extra] if extra else [])
    if w in BARE_CONTRACTIONS:
        return BARE_CONTRACTIONS[w].split()
    if w in ABBREVIATIONS:
        return ABBREVIATIONS[w].split()
    return [w]


def _parse_number_words(words: list[str]) -> list[float]:
    """Number words to values: "twenty five" -> 25, "two hundred" -> 200, "first" -> 1."""
    out: list[float] = []
    current: float | None = None
    prev = ""
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        pronoun_one = w == "one" and (prev in _ONE_PRONOUN_BEFORE or nxt in ("of", "another"))
        if w in _SMALL_NUMBERS and not pronoun_one:
            current = (current or 0) + _SMALL_NUMBERS[w]
        elif w in _TENS:
            current = (current or 0) + _TENS[w]
        elif w in _SCALES and (current is not None or w == "dozen"):
            current = (current if current is not None else 1) * _SCALES[w]
        else:
            if current is not None:
                out.append(current)
                current = None
            unit_second = w == "second" and (prev in ("a", "per", "one", "each", "every") or prev[:1].isdigit())
            if w in _ORDINALS and not unit_second:
                out.append(_ORDINALS[w])
        prev = w
    if current is not None:
        out.append(current)
    return out


def _unit(word: str) -> str | None:
    for w in (word, word[:-1] if word.endswith("s") else None, stem(word)):
        if w and w in _UNITS:
            return _UNITS[w]
    return None


@lru_cache(maxsize=4096)
def features(text: str) -> Features:
    """The answer-carrying parts of one question (memoised: the cached side is compared often)."""
    raw = unicodedata.normalize("NFKC", text).translate(_TRANSLATE)
    quoted = frozenset(
        " ".join(next(g for g in m.groups() if g is not None).casefold().split()) for m in _QUOTED.finditer(raw)
    )
    operators = [m.group(1) for m in _OPERATOR.finditer(raw)]
    negations = len(re.findall(r"\w-free\b", raw, re.IGNORECASE))  # sugar-free == without sugar
    raw = _GREETING_END.sub("", _GREETING_START.sub("", raw)) or raw
    raw = _ACRONYM_DOTS.sub(lambda m: m.group(0).replace(".", ""), raw)
    identifiers = {m.group(0).rstrip("()").lower() for m in _IDENTIFIER.finditer(raw)}
    for pattern, repl in _PHRASES:
        raw = pattern.sub(repl, raw)
    tokens, numbers, date_extra = _scan(raw)

    # ALL CAPS or Every Word Capitalised: the capitals carry no proper-noun signal.
    word_toks = [t[1] for t in tokens if t[0] == "word"]
    shouting = len(word_toks) > 2 and (
        sum(1 for t in word_toks if t.isupper() and len(t) > 1) > 0.6 * len(word_toks)
        or (len(word_toks) >= 5 and all(t[0].isupper() for t in word_toks))
    )

    words: list[str] = []
    entities: list[str] = []
    units: list[str] = []
    measured: set[str] = set()
    dates: set[str] = set(date_extra)
    prev_kind = ""
    prev_raw = ""
    for idx, (kind, tok, capital, initial) in enumerate(tokens):
        nxt = tokens[idx + 1] if idx + 1 < len(tokens) else None
        if kind == "num":
            words.append(tok)
            prev_kind, prev_raw = "num", tok
            continue
        if kind == "sym":
            if tok in _UNITS:
                units.append(_UNITS[tok])
                if prev_kind == "num" or (nxt is not None and nxt[0] == "num"):
                    measured.add(_UNITS[tok])  # "15%", "$300"
            prev_kind, prev_raw = "sym", tok
            continue
        lower = tok.lower()
        if tok.isupper() and lower in _ROMAN:  # "World War II", "Henry VIII"
            numbers.append(_ROMAN[lower])
            prev_kind, prev_raw = "num", tok
            continue
        if tok == "I" and prev_raw[:1].isupper() and not initial and (nxt is None or nxt[3]):
            numbers.append(1)  # "World War I?" (the last word of its sentence, after a capitalised word)
            prev_kind, prev_raw = "num", tok
            continue
        if prev_kind == "num" and lower in ("am", "pm"):  # "9 am"; "I'm" is not a time
            dates.add(lower)
            prev_kind, prev_raw = "word", tok
            continue
        if lower == "first" and (nxt is None or nxt[3]) and prev_raw.lower() != "the":
            lower = "initially"  # adverb: "... or save first?"
        elif (
            lower == "last"
            and prev_raw.lower() not in _DETERMINERS
            and not (nxt is not None and _unit(nxt[1].lower()) in TIME_UNITS)
        ):
            lower = "endure"  # the verb: "how long does rice last", not "the last person" / "last year"
        if prev_kind == "num" and lower in _UNITS_AFTER_NUMBER:  # "200 g", "10 min", "30 second"
            units.append(_UNITS_AFTER_NUMBER[lower])
            measured.add(_UNITS_AFTER_NUMBER[lower])
            words.append(lower)
            prev_kind, prev_raw = "word", tok
            continue
        if tok == "US":
            lower = "usa"  # the country, not the pronoun
        is_entity = not shouting and (
            (capital and not initial and tok != "I")
            or (len(tok) >= 2 and tok.isupper())
            or any(c.isupper() for c in tok[1:])
        )
        for w in _expand(lower):
            unit = _unit(w)
            if unit:
                units.append(unit)
                if prev_kind == "num" or (words and words[-1] in _NUMBER_WORDS):
                    measured.add(unit)
            elif w in MONTHS and (
                w not in _AMBIGUOUS_MONTHS
                or (capital and not initial)
                or prev_kind == "num"
                or (nxt is not None and nxt[0] == "num")
            ):
                dates.add(MONTHS[w])
            elif w in DATE_WORDS or stem(w) in DATE_WORDS:
                dates.add(DATE_WORDS.get(w) or DATE_WORDS[stem(w)])
            if w in NEGATION_WORDS or (w.startswith("non") and len(w) > 6 and w != "nonetheless"):
                negations += 1
            words.append(w)
            if is_entity and w not in STOPWORDS and w not in _NOT_CONTENT:
                entities.append(w)
        prev_kind, prev_raw = "word", tok

    for w in sorted(identifiers):
        if w not in entities:
            entities.append(w)

    numbers.extend(_parse_number_words(words))
    for i, w in enumerate(words):
        if (
            OPERATOR_WORDS.get(w)
            and i > 0
            and (words[i - 1][:1].isdigit() or words[i - 1] in _SMALL_NUMBERS or words[i - 1] in _TENS)
        ):
            operators.append(OPERATOR_WORDS[w])

    # The kind of question: the first wh-word ("... fail when I select ..., why?" asks why).
    wh: set[str] = set()
    quantity_words: set[int] = set()
    for i, w in enumerate(words):
        if w == "how" and i + 1 < len(words) and words[i + 1] in _QUANTITY_HOW:
            quantity_words.add(i + 1)  # "how much" / "how many" / "how often": part of the wh phrase
        if not wh:
            if w in ("who", "whom", "whose"):
                wh.add("who")
            elif w in ("when", "where", "why"):
                wh.add(w)
            elif w == "how":
                wh.add("how_quantity" if i + 1 in quantity_words else "how")
            elif w == "what" and i + 1 < len(words) and words[i + 1] in _AUX_OR_DET:
                wh.add("what")  # "what do pandas eat", "what's the ..."; "what year/temperature" is neutral

    degree: set[str] = set()
    for w in words:
        if w in DEGREE:
            degree.add(DEGREE[w])
        elif len(w) >= 6 and w.endswith("est") and w not in _NOT_SUPERLATIVE:
            degree.add(w)
    antonyms: dict[int, set[int]] = {}
    for w in words:
        for group, side in _ANTONYM_SIDE.get(stem(w), ()):
            antonyms.setdefault(group, set()).add(side)

    # Every word that names something, by position: content stems, entities, units.
    keyed = []
    for i, w in enumerate(words):
        unit = _unit(w)
        if unit:
            keyed.append((i, unit))
        elif w in entities:
            keyed.append((i, w))
        elif (
            len(w) > 1
            and not w[:1].isdigit()
            and w not in STOPWORDS
            and w not in _NOT_CONTENT
            and i not in quantity_words
            and w not in ("often", "frequently")
        ):
            keyed.append((i, stem(w)))
    content = tuple(k for i, k in keyed if not _unit(words[i]) and k == stem(words[i]))
    aligned = tuple(stem(w) for w in words)
    return Features(
        text=" ".join(unicodedata.normalize("NFKC", text).translate(_TRANSLATE).casefold().split()),
        words=tuple(words),
        aligned=aligned,
        content=content,
        keyed=tuple(keyed),
        negations=negations,
        numbers=tuple(sorted(float(n) for n in numbers)),
        operators=tuple(sorted(operators)),
        dates=frozenset(dates),
        units=tuple(units),
        measured=frozenset(measured),
        quoted=quoted,
        entities=tuple(dict.fromkeys(entities)),
        wh=frozenset(wh),
        degree=frozenset(degree),
        antonyms={k: frozenset(v) for k, v in antonyms.items()},
    )


_NOT_CONTENT = (
    frozenset(MONTHS)
    | frozenset(DATE_WORDS)
    | frozenset(DEGREE)
    | frozenset(_SMALL_NUMBERS)
    | frozenset(_TENS)
    | frozenset(_ORDINALS)
    | frozenset(_SCALES)
    | NEGATION_WORDS
    | FILLERS
    | frozenset(OPERATOR_WORDS)
)


# ------------------------------------------------------------------------------------- rules


def _fmt(values) -> str:
    values = list(values)
    return "{" + ", ".join(_num(v) if isinstance(v, float) else str(v) for v in values) + "}"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _affix_negation(a: Features, b: Features) -> str | None:
    sa, sb = set(a.words), set(b.words)
    for x, ys in ((sa, sb), (sb, sa)):
        for w in x - ys:
            if len(w) < 5:
                continue
            for p in NEGATING_PREFIXES:
                if w.startswith(p) and len(w) - len(p) >= 4 and (w[len(p) :] in ys or w[len(p) :].lstrip("-") in ys):
                    return f"negation: {w[len(p) :]!r} vs {w!r}"
            if w.endswith("less") and w[:-4] + "ful" in ys:
                return f"negation: {w[:-4] + 'ful'!r} vs {w!r}"
    return None


def _entity_gap(a: Features, b: Features) -> str | None:
    wa = set(a.words) | {stem(w) for w in a.words} | set(a.entities)
    wb = set(b.words) | {stem(w) for w in b.words} | set(b.entities)
    joined_a = "".join(a.words)
    joined_b = "".join(b.words)
    only_a = [e for e in a.entities if e not in wb and stem(e) not in wb and e.replace(".", "") not in joined_b]
    only_b = [e for e in b.entities if e not in wa and stem(e) not in wa and e.replace(".", "") not in joined_a]
    if only_a or only_b:
        return f"entity: {_fmt(only_a)} vs {_fmt(only_b)}"
    return None


def _equivalent_somewhere(x: str, ys) -> bool:
    return any(words_equivalent(x, y) for y in ys)


def template_ratio(a: Features, b: Features) -> float:
    """How much of the two questions is the same word sequence (difflib ratio over word stems)."""
    return SequenceMatcher(None, a.aligned, b.aligned, autojunk=False).ratio()


def _template_change(a: Features, b: Features) -> str | None:
    """Same sentence with one slot changed: "atomic number of sodium" vs "... of potassium",
    "side effects of aspirin" vs "side effects of stopping aspirin", "Spain beat Italy" vs "Italy beat
    Spain".

    Only for look-alike pairs (most of the word sequence shared, ``LOOKALIKE_RATIO``): a paraphrase
    rewords and reorders, so its changes do not sit in single slots of one template. In a look-alike:
    a content word that replaces another, or that is inserted on its own, must have an equivalent
    (synonym, inflection, typo) somewhere in the other question; and named things keep their order."""
    if template_ratio(a, b) < LOOKALIKE_RATIO:
        return None
    content_a, content_b = set(a.content), set(b.content)
    joined_a = {a.aligned[i] + a.aligned[i + 1] for i in range(len(a.aligned) - 1)}
    joined_b = {b.aligned[i] + b.aligned[i + 1] for i in range(len(b.aligned) - 1)}
    matcher = SequenceMatcher(None, a.aligned, b.aligned, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        left = [w for w in a.aligned[i1:i2] if w in content_a and w not in joined_b]
        right = [w for w in b.aligned[j1:j2] if w in content_b and w not in joined_a]
        left = [w for w in left if not _equivalent_somewhere(w, b.content)]
        right = [w for w in right if not _equivalent_somewhere(w, a.content)]
        if op == "replace" and left and right:
            return f"changed word: {_fmt(left)} -> {_fmt(right)}"
        if op in ("insert", "delete") and (left or right):
            return f"added qualifier: {_fmt(left or right)}"
    ents_a = [e for e in a.entities if e in b.entities]
    ents_b = [e for e in b.entities if e in a.entities]
    if len(ents_a) > 1 and ents_a != ents_b and not (_symmetric_between(a, ents_a) and _symmetric_between(b, ents_b)):
        return f"order: {' -> '.join(ents_a)} vs {' -> '.join(ents_b)}"
    return None


_SYMMETRIC = frozenset("and or vs versus with between both".split())


def _symmetric_between(f: Features, ents: list[str]) -> bool:
    """Named things joined only by and/or/vs: their order does not change the question."""
    pos = [f.words.index(e) for e in ents if e in f.words]
    if len(pos) < 2:
        return True
    between = f.words[min(pos) + 1 : max(pos)]
    return all(w in _SYMMETRIC or w in STOPWORDS and w not in _ORDER_WORDS for w in between) and any(
        w in _SYMMETRIC for w in between
    )


def _ordered_pairs(f: Features) -> set[tuple[str, str]]:
    """(x, y) for two things named on either side of "to"/"into"/"from"/"than"/"in"/"before"/"after":
    ("airport", "downtown") in "get to the airport from downtown"."""
    pairs = set()
    for (i, x), (j, y) in zip(f.keyed, f.keyed[1:]):
        if x != y and j - i <= 4 and any(w in _ORDER_WORDS for w in f.words[i + 1 : j]):
            pairs.add((x, y))
    return pairs


_ORDER_WORDS = frozenset("to into from than in per before after".split())


def check(cached_question: str, new_question: str) -> tuple[bool, str]:
    """(ok, reason): may the answer cached for ``cached_question`` be served for ``new_question``?"""
    a, b = features(cached_question), features(new_question)
    if a.negations != b.negations:
        return False, f"negation: {a.negations} vs {b.negations} negation words"
    reason = _affix_negation(a, b)
    if reason:
        return False, reason
    if a.numbers != b.numbers:
        return False, f"number: {_fmt(a.numbers)} vs {_fmt(b.numbers)}"
    if a.operators != b.operators:
        return False, f"operator: {_fmt(a.operators)} vs {_fmt(b.operators)}"
    if a.dates != b.dates:
        return False, f"date: {_fmt(sorted(a.dates))} vs {_fmt(sorted(b.dates))}"
    ua, ub = set(a.units), set(b.units)
    # Compared when both name a unit ("1 cup" vs "1 tablespoon") or one gives a quantity in it ("5 km");
    # a bare "cup of tea" against "brew tea" is a rewording.
    if ua != ub and ((ua and ub) or (ua - ub) & a.measured or (ub - ua) & b.measured):
        return False, f"unit: {_fmt(sorted(ua))} vs {_fmt(sorted(ub))}"
    missing = sorted(q for q in a.quoted if q not in b.text) + sorted(q for q in b.quoted if q not in a.text)
    if missing:
        return False, f"quoted: {_fmt(missing)} in one question only"
    reason = _entity_gap(a, b)
    if reason:
        return False, reason
    pa, pb = _ordered_pairs(a), _ordered_pairs(b)
    for x, y in pa:
        if (y, x) in pb and (y, x) not in pa:
            return False, f"order: {x} -> {y} vs {y} -> {x}"
    if a.wh and b.wh and a.wh != b.wh and not ({"what"} in (a.wh, b.wh) and {"how", "how_quantity"} & (a.wh | b.wh)):
        return False, f"question type: {_fmt(sorted(a.wh))} vs {_fmt(sorted(b.wh))}"
    for group in set(a.antonyms) & set(b.antonyms):
        if a.antonyms[group] != b.antonyms[group]:
            left, right = ANTONYMS[group]
            return False, f"antonym: {left.split()[0]}/{right.split()[0]}"
    if a.degree != b.degree:
        return False, f"degree: {_fmt(sorted(a.degree))} vs {_fmt(sorted(b.degree))}"
    reason = _template_change(a, b)
    if reason:
        return False, reason
    return True, "ok"
