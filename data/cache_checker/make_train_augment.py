"""Augment the checker's training pairs with the edits the first model read worst on the dev split:
direction swaps ("convert A to B" / "B to A"), polarity swaps of the verb or adjective (tighten /
loosen, legal / illegal, can / cannot), and surface-only variants that keep the meaning (a greeting,
a hyphen dropped, casing, a trailing thanks). Standard library only, deterministic (seed 0).

    python data/cache_checker/make_train_augment.py   # writes train_augment.jsonl beside it

Seeds for the surface variants are the stored-side questions of train_singles.jsonl; nothing here comes
from tests/data (the evaluation splits).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(0)

CONVERSIONS = [
    ("a PDF", "a Word document"), ("a string", "an integer"), ("a list", "a tuple"), ("JSON", "CSV"),
    ("a PNG", "a JPEG"), ("an MP4", "a GIF"), ("Markdown", "HTML"), ("a float", "a string"),
    ("a dictionary", "a list"), ("an Excel sheet", "a Google Sheet"), ("a HEIC photo", "a JPG"),
    ("a date string", "a timestamp"), ("XML", "JSON"), ("a bytes object", "a string"), ("WAV", "MP3"),
    ("a Pandas DataFrame", "a NumPy array"), ("an EPUB", "a PDF"), ("a tab-separated file", "a spreadsheet"),
]
UNITS = [
    ("Fahrenheit", "Celsius"), ("kilograms", "pounds"), ("miles", "kilometers"), ("cups", "grams"),
    ("inches", "centimeters"), ("liters", "gallons"), ("ounces", "milliliters"), ("feet", "meters"),
    ("euros", "dollars"), ("yen", "pounds sterling"), ("hours", "minutes"), ("tablespoons", "teaspoons"),
]
PLACES = [
    ("Paris", "London"), ("Boston", "New York"), ("Madrid", "Barcelona"), ("the airport", "downtown"),
    ("Tokyo", "Osaka"), ("Berlin", "Munich"), ("Rome", "Florence"), ("Seattle", "Vancouver"),
    ("the train station", "the old town"), ("Lisbon", "Porto"), ("Sydney", "Melbourne"),
]
LANGS = [("English", "Spanish"), ("French", "German"), ("Italian", "Portuguese"), ("Japanese", "English")]
DIRECTION_TEMPLATES = [
    ("How do I convert {a} to {b}?", ["What's the way to turn {a} into {b}?", "how to convert {a} into {b}",
                                      "Converting {a} to {b}: how do I do it?"]),
    ("What's the easiest way to change {a} into {b}?", ["How can I easily convert {a} to {b}?"]),
]
UNIT_TEMPLATES = [
    ("How do I convert {a} to {b}?", ["What's the formula to go from {a} to {b}?", "{a} to {b} conversion?"]),
    ("What is {n} {a} in {b}?", ["How many {b} is {n} {a}?", "convert {n} {a} to {b}"]),
]
PLACE_TEMPLATES = [
    ("How do I get from {a} to {b}?", ["What's the best way to travel from {a} to {b}?",
                                      "Getting from {a} to {b} - what are my options?"]),
    ("How long is the train from {a} to {b}?", ["How long does the train take from {a} to {b}?"]),
    ("How much is a taxi from {a} to {b}?", ["What does a cab from {a} to {b} cost?"]),
]
LANG_TEMPLATES = [
    ("Translate 'good morning' from {a} to {b}.", ["How do you say good morning in {b} if I know the {a}?"]),
    ("What's the hardest part of switching from {a} to {b}?", ["For a {a} speaker, what is hardest about learning {b}?"]),
]

POLAR = [  # (word, opposite) inside a question frame, with the objects it fits
    ("tighten", "loosen", ["a door hinge", "a bike chain", "a guitar string", "a faucet handle", "a drum head"]),
    ("increase", "decrease", ["my credit score", "the font size in Word", "water pressure in my shower", "my running pace"]),
    ("encrypt", "decrypt", ["a file with GPG", "a zip archive", "an email", "a USB drive"]),
    ("upload", "download", ["photos to Google Drive", "a video to YouTube", "files to my NAS", "a backup to Dropbox"]),
    ("import", "export", ["contacts in Outlook", "bookmarks in Chrome", "a database in MySQL", "settings in VS Code"]),
    ("enable", "disable", ["dark mode on my iPhone", "two-factor login on Gmail", "cookies in Firefox", "auto-updates on Windows"]),
    ("add", "remove", ["a user to a Linux group", "a printer on a Mac", "a column in Excel", "a widget on Android"]),
    ("start", "stop", ["a Docker container", "a Windows service", "a sourdough starter", "a fire in a wood stove"]),
    ("heat", "cool", ["a greenhouse cheaply", "a garage in winter", "a small apartment", "a fish tank"]),
    ("raise", "lower", ["my cholesterol", "the pH of soil", "my car's suspension", "the thermostat schedule"]),
    ("speed up", "slow down", ["a video in VLC", "my metabolism", "a sourdough rise", "a Python loop"]),
    ("lock", "unlock", ["a cell in Excel", "my car remotely", "a SIM card", "the screen on a Mac"]),
    ("buy", "sell", ["a used car privately", "Bitcoin on Coinbase", "a house without an agent", "concert tickets safely"]),
    ("open", "close", ["a Roth IRA", "a joint bank account", "a port in my firewall", "a LinkedIn account"]),
]
POLAR_TEMPLATES = [
    "How do I {w} {o}?", "What's the best way to {w} {o}?", "Is it hard to {w} {o}?", "how to {w} {o}",
]
ADJ = [
    ("legal", "illegal", ["to fly a drone over a park", "to collect rainwater", "to drive barefoot", "to record a phone call"]),
    ("safe", "unsafe", ["to eat raw cookie dough", "to charge a phone overnight", "to swim after eating", "to reuse plastic bottles"]),
    ("possible", "impossible", ["to recover a deleted WhatsApp chat", "to run Windows on a Mac", "to grow avocados indoors"]),
    ("healthy", "unhealthy", ["to skip breakfast", "to eat eggs every day", "to drink coffee before a run"]),
    ("common", "rare", ["to have a fever after a vaccine", "for cats to drink milk", "for dogs to eat grass"]),
]
ADJ_TEMPLATES = ["Is it {w} {o}?", "Why is it {w} {o}?", "In which countries is it {w} {o}?"]
CAN = [
    ("Which {x} can {v}?", "Which {x} cannot {v}?"), ("Which {x} can {v}?", "Which {x} can't {v}?"),
    ("Why do {x} {v}?", "Why don't {x} {v}?"), ("What {x} {v}?", "What {x} never {v}?"),
]
CAN_SLOTS = [
    ("birds", "fly"), ("animals", "see color"), ("plants", "grow in shade"), ("metals", "rust"),
    ("fish", "breathe air"), ("cats", "eat fish"), ("trees", "survive frost"), ("foods", "be frozen"),
    ("medications", "be taken with alcohol"), ("file types", "be compressed"), ("snakes", "swim"),
    ("vitamins", "be stored in the body"), ("phones", "charge wirelessly"), ("dogs", "eat bananas"),
]
GREETINGS = ["Hi! ", "Hey, ", "Hello, ", "Quick question: ", "hey there, ", "Good morning! ", "Sorry to bother you, "]
TAILS = [" Thanks!", " thank you", " Thanks in advance.", " :)", " please", " Cheers."]


def fill(template: str, **kw) -> str:
    return template.format(**kw)


def direction_pairs():
    out = []
    for pairs, templates in ((CONVERSIONS, DIRECTION_TEMPLATES), (UNITS, UNIT_TEMPLATES), (PLACES, PLACE_TEMPLATES), (LANGS, LANG_TEMPLATES)):
        for a, b in pairs:
            for base, rewords in templates:
                n = rng.choice([5, 12, 30, 100, 250])
                q = fill(base, a=a, b=b, n=n)
                out.append((q, fill(base, a=b, b=a, n=n), 0, "direction_swap"))
                r = rng.choice(rewords)
                out.append((q, fill(r, a=a, b=b, n=n), 1, "paraphrase"))
                out.append((q, fill(r, a=b, b=a, n=n), 0, "direction_swap"))
    return out


def polarity_pairs():
    out = []
    for w, opp, objs in POLAR:
        for o in objs:
            t = rng.choice(POLAR_TEMPLATES)
            q = fill(t, w=w, o=o)
            out.append((q, fill(t, w=opp, o=o), 0, "negation"))
            t2 = rng.choice([x for x in POLAR_TEMPLATES if x != t])
            out.append((q, fill(t2, w=w, o=o), 1, "paraphrase"))
    for w, opp, objs in ADJ:
        for o in objs:
            t = rng.choice(ADJ_TEMPLATES)
            out.append((fill(t, w=w, o=o), fill(t, w=opp, o=o), 0, "negation"))
            out.append((fill(t, w=w, o=o), fill(t, w=w, o=o).replace("Is it", "Would it be"), 1, "paraphrase"))
    for x, v in CAN_SLOTS:
        pos, neg = rng.choice(CAN)
        out.append((fill(pos, x=x, v=v), fill(neg, x=x, v=v), 0, "negation"))
    return out


def surface_pairs(limit: int = 700):
    seeds = []
    for line in (HERE / "train_singles.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            seeds.append(json.loads(line)["a"])
    seeds = sorted(set(seeds))
    rng.shuffle(seeds)
    out = []
    for q in seeds[:limit]:
        kind = rng.randrange(5)
        if kind == 0:
            v = rng.choice(GREETINGS) + q[0].lower() + q[1:]
        elif kind == 1:
            v = q.rstrip("?.!") + rng.choice(TAILS)
        elif kind == 2:
            v = q.lower().rstrip("?")
        elif kind == 3:
            v = q.replace("-", "") if "-" in q else q.replace("?", " ?").upper()
        else:
            v = rng.choice(GREETINGS) + q.lower().rstrip("?") + rng.choice(TAILS)
        if v != q:
            out.append((q, v, 1, "near_repeat"))
    return out


def main() -> None:
    rows = direction_pairs() + polarity_pairs() + surface_pairs()
    seen, uniq = set(), []
    for a, b, y, k in rows:
        if a == b or (a, b) in seen:
            continue
        seen.add((a, b))
        uniq.append({"a": a, "b": b, "label": y, "kind": k})
    rng.shuffle(uniq)
    with open(HERE / "train_augment.jsonl", "w", encoding="utf-8") as f:
        for r in uniq:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    from collections import Counter

    print(len(uniq), Counter((r["label"], r["kind"]) for r in uniq))


if __name__ == "__main__":
    main()
