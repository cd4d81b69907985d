"""Shared pools, slot filling, number words and surface styling.

All names of products, companies, apps and teams below are invented for
this generator. Real place names, languages, drugs and tax forms are used
only inside questions; no facts are asserted.
"""
import re
import string

# ---------------------------------------------------------------------------
# pools (uppercase slot names, e.g. {CITY}; a trailing digit such as {CITY2}
# asks for a second, distinct value from the same pool)
# ---------------------------------------------------------------------------
P = {
    "CITY": ["Chicago", "Boston", "Seattle", "Denver", "Toronto", "Montreal", "Vancouver",
             "London", "Paris", "Berlin", "Madrid", "Rome", "Lisbon", "Amsterdam", "Vienna",
             "Prague", "Dublin", "Tokyo", "Seoul", "Singapore", "Sydney", "Melbourne",
             "Bangkok", "Istanbul", "Dubai", "Cairo", "Nairobi", "Lima", "Bogota",
             "Mexico City", "Buenos Aires", "Atlanta", "Miami", "Phoenix", "Austin",
             "Minneapolis", "Portland", "Nashville", "Barcelona", "Munich", "Zurich",
             "Oslo", "Stockholm", "Copenhagen", "Athens", "Warsaw", "Budapest", "Osaka",
             "Manila", "Hanoi", "Auckland", "Cape Town", "Houston", "San Diego"],
    "COUNTRY": ["Canada", "Mexico", "Brazil", "Japan", "India", "Germany", "France",
                "Australia", "Kenya", "Nigeria", "Thailand", "Vietnam", "Argentina", "Chile",
                "Egypt", "Turkey", "South Africa", "Indonesia", "Peru", "Morocco", "Ireland",
                "Italy", "Spain", "Poland", "Colombia", "Portugal", "Greece", "Norway",
                "Sweden", "New Zealand", "South Korea", "Iceland", "Croatia", "Costa Rica"],
    "STATE": ["California", "Texas", "Florida", "New York", "Ohio", "Oregon", "Colorado",
              "Arizona", "Georgia", "Michigan", "Washington", "Illinois", "Nevada",
              "Pennsylvania", "Massachusetts", "Utah", "Virginia", "Minnesota",
              "North Carolina", "New Jersey", "Tennessee", "Wisconsin"],
    "MONTH": ["January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"],
    "DEV": ["Zentro S5", "Zentro S5 Pro", "Orbit Tab 10", "Kestrel X14 laptop",
            "Pulsewave watch", "Arcadia smart TV", "Quill e-reader", "Tessera 3 phone",
            "phone", "laptop", "tablet", "Android phone", "iPhone", "Chromebook",
            "Windows laptop", "MacBook"],
    "OS": ["Windows 11", "Windows 10", "macOS", "Ubuntu", "Linux", "ChromeOS", "Fedora",
           "Debian"],
    "APP": ["Tallybook", "PhotoHive", "Noteworthy", "Stackr", "FitLoop", "Cartwise",
            "Taskmint", "Ledgerly", "Pocketplan", "Sketchpond", "Roamly", "Hivedesk"],
    "CHAT": ["ChatNest", "PingMe", "Huddle", "Blabber", "Murmur"],
    "SOCIAL": ["Glimpse", "Chirper", "Circlr", "Snapverse", "Pictogram"],
    "BROWSER": ["Chrome", "Firefox", "Safari", "Edge", "Brave", "Vireo Browser"],
    "MAIL": ["Lumen Mail", "Postbox", "Gmail", "Outlook", "Mailwise"],
    "BANK": ["Harborline Bank", "Cedar Union", "First Meridian", "Oakridge Savings",
             "Northgate Credit Union", "Bluefin Bank", "Summit Trust", "Keel Bank"],
    "INSCO": ["Shieldwell", "Evergreen Mutual", "Anchor Point Insurance",
              "Brightpath Insurance", "Keystone Assurance", "Tallgrass Insurance"],
    "AIRLINE": ["SkyReach", "Bluecrest Air", "Northwind Airlines", "Aerolux",
                "Pacifica Air", "Solstice Air", "Meridian Wings"],
    "CARRIER": ["Veltro Mobile", "SkyLine Wireless", "Halcyon Telecom", "NovaCell",
                "Brightwave", "Tidal Mobile"],
    "ISP": ["FiberLeaf", "Swiftnet", "Coastline Broadband", "Beacon Internet"],
    "STORE": ["Cartwise", "Homestead Supply", "Urban Thread", "Valuemore", "Pine & Porter",
              "Gadget Grove", "Brightshelf", "Corner Market Co"],
    "STREAM": ["StreamVault", "Flickbox", "Reelz+", "Cinewave", "Tunely", "SoundHarbor"],
    "GYM": ["IronPeak Gym", "FlexFit", "Core & More", "Pulse Athletic Club"],
    "COMPANY": ["Arclight Labs", "Bramble & Co", "Northstar Logistics", "Fernhill Media",
                "Quarry Systems", "Lanternworks"],
    "UTILITY": ["Riverbend Power", "Clearwater Utilities", "Sunward Energy", "Metro Gas Co",
                "Valley Water District"],
    "SCHOOL": ["Lakeside Community College", "Westbrook University", "Hillcrest College",
               "Ridgeview State University", "Marlow Tech"],
    "PHARMACY": ["Greenleaf Pharmacy", "CareWay Drug", "Mercer Apothecary", "QuickRx",
                 "Sunrise Pharmacy"],
    "VENUE": ["the Riverside Arena", "Harbor Hall", "the Civic Dome",
              "Maple Amphitheater", "the Lakefront Pavilion"],
    "TEAM": ["Harbor City Gulls", "Ridgeport Foxes", "Lakeview Comets", "Granite Bay Bears",
             "Westfield Rovers", "Copper Valley Miners", "Pinecrest Owls", "Ashford Falcons",
             "Seaside Marlins", "Redwood Giants"],
    "DOCAPP": ["Word", "Google Docs", "PageCraft", "Scribe Docs", "LibreOffice Writer"],
    "SHEETS": ["Excel", "Google Sheets", "GridCalc", "Numbers"],
    "IDE": ["VS Code", "PyCharm", "IntelliJ", "Vim", "CodeForge", "Sublime Text"],
    "LANG": ["Python", "JavaScript", "Java", "Go", "Rust", "C#", "Ruby", "TypeScript",
             "Kotlin", "PHP", "Swift"],
    "CLOUD": ["DriveBox", "CloudNest", "SkyVault", "Boxful"],
    "CAL": ["DayPlanner", "Google Calendar", "Outlook", "Agendo"],
    "BUDGETAPP": ["BudgetBee", "Centsible", "Moneywise", "Pennywise"],
    "VIDEOAPP": ["Meetly", "Zoom", "Teams", "Confero"],
    "REL": ["wife", "husband", "son", "daughter", "mom", "dad", "partner", "roommate",
            "brother", "sister", "grandmother", "boyfriend", "girlfriend", "teenager",
            "father-in-law", "business partner"],
    "DRUG": ["ibuprofen", "acetaminophen", "naproxen", "aspirin", "loratadine",
             "cetirizine", "diphenhydramine", "melatonin", "omeprazole", "famotidine"],
    "HOTEL": ["the Harborview Inn", "the Larkspur Hotel", "Cobalt Suites", "the Westgate Lodge",
              "the Brightwater Resort"],
    "REST": ["Luna Trattoria", "the Copper Pot", "Saffron House", "Birch & Barrel",
             "Noodle Republic"],
    "CAR": ["Corvane sedan", "Tessaro hatchback", "Ranger X SUV", "Altis minivan",
            "Vela pickup"],
    "SHOW": ["Cedar Falls", "The Long Harbor", "Starfall Academy", "Kitchen Clash",
             "Island Rivals"],
    "SERIES": ["Emberlight", "Glass Orchard", "Moonwell Chronicles", "Saltwind"],
    "HOLIDAY": ["Thanksgiving", "Christmas Eve", "New Year's Day", "Labor Day",
                "Memorial Day", "Easter Sunday", "the Fourth of July", "Veterans Day"],
    "CONTINENT": ["Africa", "Europe", "Asia", "South America", "North America", "Oceania"],
    "GAME": ["Skyforge", "Tiny Kingdoms", "Lost Tides", "Quarry Quest"],
}

SLOT_RE = re.compile(r"\{([A-Z_]+?)(\d?)\}")


def fill(t, rng, memo):
    """Replace uppercase pool slots; memo keeps values consistent within a pair."""
    for _ in range(4):
        changed = False

        def rep(m):
            nonlocal changed
            name, idx = m.group(1), m.group(2)
            if name not in P:
                return m.group(0)
            key = name + idx
            changed = True
            if key in memo:
                return memo[key]
            used = {v for k, v in memo.items() if k.rstrip("0123456789") == name}
            choices = [x for x in P[name] if x not in used] or P[name]
            val = rng.choice(choices)
            memo[key] = val
            return val

        t = SLOT_RE.sub(rep, t)
        if not changed:
            break
    return t


def sub(t, **kw):
    for k, v in kw.items():
        t = t.replace("{" + k + "}", str(v))
    return t


# ---------------------------------------------------------------------------
# articles: fix "a"/"an" before the word that follows
# ---------------------------------------------------------------------------
_AN_LETTERS = set("AEFHILMNORSX")
_CONS_VOWEL_PREFIX = ("uni", "use", "usu", "uti", "ure", "uro", "eu", "one", "once", "ubi",
                      "u.s", "ufo", "uk ")
_SILENT_H = ("hour", "honest", "honor", "honour", "heir", "herb")
_WORDLIKE = {"SIM", "HELOC", "HEIC", "FAFSA", "FLAC", "SEP", "REIT", "REITS", "NASA", "SAT",
             "LASIK", "FICO", "SIMS", "NATO", "NAS", "MOV", "WAV", "GIF", "JPEG", "YAML"}


def _wants_an(word):
    w = word
    if not w:
        return False
    if w[0].isdigit():
        return w.startswith("8") or w.startswith("11") or w.startswith("18")
    core = re.sub(r"[^A-Za-z]", "", w)
    if not core:
        return False
    if core.upper() in _WORDLIKE and core[:2].isupper():
        return core[0].lower() in "aeiou"
    if len(core) >= 2 and core.isupper():
        return core[0] in _AN_LETTERS
    if len(core) == 1 and core.isupper():
        return core[0] in _AN_LETTERS
    lw = w.lower()
    if lw.startswith(_SILENT_H):
        return True
    if lw.startswith(_CONS_VOWEL_PREFIX):
        return False
    return lw[0] in "aeiou"


_ART_RE = re.compile(r"(^|(?<=[\s(\"']))(a|an|A|An)\s+([\w$€£'][\w'().$€£-]*)")


def fix_articles(s):
    def rep(m):
        art, word = m.group(2), m.group(3)
        if art in ("A", "An") and m.start(2) != 0:
            return m.group(0)
        an = _wants_an(word)
        new = "an" if an else "a"
        if art[0] == "A":
            new = new.capitalize()
        return m.group(1) + new + " " + word
    return _ART_RE.sub(rep, s)


# ---------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------
ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen").split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def words(n):
    n = int(n)
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else "-" + ONES[n % 10])
    if n < 1000:
        return ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + words(n % 100))
    if n < 1000000:
        r = n % 1000
        return words(n // 1000) + " thousand" + ("" if r == 0 else " " + words(r))
    r = n % 1000000
    return words(n // 1000000) + " million" + ("" if r == 0 else " " + words(r))


def commas(n):
    return "{:,}".format(int(n))


def wordable(n):
    n = int(n)
    return n <= 20 or (n <= 100 and n % 5 == 0) or (n <= 1000 and n % 100 == 0) or \
        (n <= 100000 and n % 1000 == 0) or n in (1000000, 2000000, 5000000)


def num_forms(n):
    """Equivalent surface forms of a non-negative integer."""
    n = int(n)
    out = [str(n)]
    if n >= 1000:
        out.append(commas(n))
    if wordable(n):
        out.append(words(n))
    if 1100 <= n <= 1900 and n % 100 == 0:
        out.append(words(n // 100) + " hundred")
    if n >= 1000 and n % 1000 == 0 and n < 1000000:
        out.append("%dk" % (n // 1000))
    if n == 12:
        out.append("a dozen")
    return out


ORD_WORDS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
             "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
             "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"]


def ord_digits(n):
    if 10 <= n % 100 <= 20:
        suf = "th"
    else:
        suf = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suf)


def ord_words(n):
    if n <= 20:
        return ORD_WORDS[n]
    t, o = divmod(n, 10)
    if o == 0:
        return TENS[t][:-1] + "ieth"
    return TENS[t] + "-" + ORD_WORDS[o]


# ---------------------------------------------------------------------------
# normalisation for de-duplication
# ---------------------------------------------------------------------------
_PUNCT = set(string.punctuation) | set("\u2019\u2018\u201c\u201d\u2014\u2013")


def norm(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    return " ".join(s.split())


def pair_key(a, b):
    x, y = norm(a), norm(b)
    return (x, y) if x <= y else (y, x)


def clean(s):
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"\s+([,?!.:])", r"\1", s)
    s = fix_articles(s)
    return s


# ---------------------------------------------------------------------------
# surface styling, applied independently to both sides of every pair
# ---------------------------------------------------------------------------
PRE = ["hi, ", "hey, ", "hello, ", "quick question: ", "question: ", "ok so ", "hey there! ",
       "Hi! ", "good morning, ", "sorry to bother you, ", "help: ", "so ", "um, ", "hi team, ",
       "Hello. ", "random question, ", "I was wondering, ", "hey quick one - ",
       "Could you tell me ", "I'd like to know: ", "hiya, ", "yo, ", "Dear support, ",
       "need help: ", "one more question: "]
POST = [" thanks", " thanks!", " thx", " ty", " please", " pls", " thank you!", " cheers",
        " any ideas?", " appreciate it", " :)", " asap", " thanks in advance",
        " (sorry if this is obvious)", " help!", " please advise", " tia"]
CONTRACT = [("what's", "what is"), ("don't", "do not"), ("doesn't", "does not"),
            ("can't", "cannot"), ("won't", "will not"), ("isn't", "is not"),
            ("it's", "it is"), ("I'm", "I am"), ("aren't", "are not"),
            ("shouldn't", "should not"), ("I've", "I have"), ("where's", "where is"),
            ("didn't", "did not"), ("there's", "there is")]
_WORD_RE = re.compile(r"[A-Za-z]+")


def _typo(s, rng):
    cands = [m for m in _WORD_RE.finditer(s)
             if len(m.group(0)) >= 5 and m.group(0).islower()]
    if not cands:
        return s
    m = rng.choice(cands)
    w = m.group(0)
    kind = rng.random()
    if kind < 0.6:
        i = rng.randrange(1, len(w) - 2)
        nw = w[:i] + w[i + 1] + w[i] + w[i + 2:]
    elif kind < 0.8:
        i = rng.randrange(1, len(w) - 1)
        nw = w[:i] + w[i] + w[i:]
    else:
        i = rng.randrange(1, len(w) - 1)
        nw = w[:i] + w[i + 1:]
    return s[:m.start()] + nw + s[m.end():]


def style(q, rng):
    s = q.strip()
    # contractions both ways
    r = rng.random()
    if r < 0.15:
        for c, e in CONTRACT:
            s = re.sub(r"\b" + re.escape(c) + r"\b", e, s)
    elif r < 0.25:
        for c, e in CONTRACT:
            if e not in ("it is", "I have"):
                s = re.sub(r"\b" + re.escape(e) + r"\b", c, s)
    # casual abbreviations
    if rng.random() < 0.06:
        s = re.sub(r"\byou\b", "u", s)
        s = re.sub(r"\byour\b", "ur", s)
        s = re.sub(r"\bplease\b", "pls", s)
    if rng.random() < 0.12:
        s = _typo(s, rng)
    if rng.random() < 0.08:
        s = s.replace("'", "")
    elif rng.random() < 0.05:
        s = s.replace("'", "\u2019")
    # final punctuation
    r = rng.random()
    if r < 0.68:
        end = "?"
    elif r < 0.74:
        end = "??"
    elif r < 0.77:
        end = "?!"
    elif r < 0.80:
        end = "."
    else:
        end = ""
    if s and s[-1] in "?.!":
        end = ""
    s = s + end
    # casing
    r = rng.random()
    if r < 0.62:
        s = s[0].upper() + s[1:]
    elif r < 0.97:
        s = s.lower()
    else:
        s = s.upper()
    # fillers
    if rng.random() < 0.22:
        pre = rng.choice(PRE)
        body = s
        if body[:1].isupper() and not body[:2].isupper() and rng.random() < 0.7:
            body = body[0].lower() + body[1:]
        s = pre + body
        if s[:1].islower() and rng.random() < 0.5:
            s = s[0].upper() + s[1:]
    if rng.random() < 0.16:
        s = s + rng.choice(POST)
    if rng.random() < 0.03:
        s = s.replace(" ", "  ", 1)
    return s.strip()
