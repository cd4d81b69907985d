"""Quantities, units, dates and times.

Each quantity type knows (1) how to draw a value, (2) every surface form that
means exactly that value (used for label-1 controls: "3" vs "three",
"2 weeks" vs "14 days") and (3) how to draw a different value, often a
near miss (same number with another unit, digit transposition, am/pm).
"""
from lex_common import words, num_forms, commas, ord_digits, ord_words, wordable

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
MONTH_ABBR = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec"]
DAYS_IN = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def _near_int(v, lo, hi, rng, choices=None):
    if choices:
        c = [x for x in choices if x != v]
        if rng.random() < 0.6:
            idx = choices.index(v) if v in choices else 0
            near = [choices[j] for j in (idx - 1, idx + 1) if 0 <= j < len(choices)]
            near = [x for x in near if x != v]
            if near:
                return rng.choice(near)
        return rng.choice(c)
    for _ in range(20):
        if rng.random() < 0.65:
            w = v + rng.choice([-3, -2, -1, 1, 2, 3])
        else:
            w = rng.randint(lo, hi)
        if w != v and lo <= w <= hi:
            return w
    return None


# ---------------------------------------------------------------- count
def count_draw(p, rng):
    if "choices" in p:
        return rng.choice(p["choices"])
    return rng.randint(p["lo"], p["hi"])


def count_forms(v, p):
    f = num_forms(v)
    if p.get("digits_only"):
        f = [x for x in f if any(ch.isdigit() for ch in x)]
    if p.get("no_k"):
        f = [x for x in f if not x.endswith("k")]
    if not p.get("dozen"):
        f = [x for x in f if "dozen" not in x]
    return f


def count_change(v, p, rng):
    return _near_int(v, p.get("lo", 0), p.get("hi", 10 ** 7), rng, p.get("choices"))


# ---------------------------------------------------------------- money
MONEY_CHOICES = [20, 25, 40, 50, 60, 75, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 750,
                 800, 1000, 1200, 1500, 2000, 2500, 3000, 4000, 5000, 7500, 8000, 10000, 12000,
                 15000, 20000, 25000, 30000, 40000, 45000, 50000, 60000, 75000, 80000, 90000,
                 100000, 120000, 150000, 200000, 250000, 300000, 400000, 500000]


def money_draw(p, rng):
    c = [x for x in MONEY_CHOICES if p["lo"] <= x <= p["hi"]]
    if p.get("extra"):
        c = c + p["extra"]
    return (rng.choice(c), "USD")


def money_forms(v, p):
    amt, cur = v
    out = []
    if cur == "USD":
        out += ["$" + str(amt)]
        if amt >= 1000:
            out += ["$" + commas(amt), commas(amt) + " dollars"]
        else:
            out += [str(amt) + " dollars"]
        if wordable(amt):
            out.append(words(amt) + " dollars")
        if amt >= 1000 and amt % 1000 == 0:
            out.append("$%dk" % (amt // 1000))
        if amt >= 1000 and amt % 1000 == 500 and amt < 10000:
            out.append("$%.1fk" % (amt / 1000.0))
        if 1100 <= amt <= 1900 and amt % 100 == 0:
            out.append(words(amt // 100) + " hundred dollars")
        if amt in (1000, 100) and not p.get("attr"):
            out.append("a " + ("thousand" if amt == 1000 else "hundred") + " dollars")
        if p.get("no_words"):
            out = [x for x in out if any(ch.isdigit() for ch in x)]
        if p.get("attr"):
            out = [x.replace(" dollars", " dollar") for x in out]
    elif cur == "EUR":
        out += ["\u20ac" + commas(amt), commas(amt) + " euros"]
    elif cur == "GBP":
        out += ["\u00a3" + commas(amt), commas(amt) + " pounds"]
    elif cur == "CAD":
        out += [commas(amt) + " Canadian dollars", "CA$" + commas(amt)]
    if p.get("attr") and cur != "USD":
        out = [x.replace(" euros", " euro").replace(" pounds", " pound")
               .replace(" dollars", " dollar") for x in out]
    return out


def money_change(v, p, rng):
    amt, cur = v
    r = rng.random()
    if r < 0.22 and not p.get("usd_only"):
        return (amt, rng.choice(["EUR", "GBP", "CAD"]))
    if r < 0.35:
        # digit slip: x10 or /10
        for w in (amt * 10, amt // 10):
            if p["lo"] <= w <= p["hi"] and w != amt and w > 0:
                return (w, cur)
    c = [x for x in MONEY_CHOICES if p["lo"] <= x <= p["hi"]]
    w = _near_int(amt, p["lo"], p["hi"], rng, c)
    return (w, cur) if w else None


# ---------------------------------------------------------------- percent
PCT_CHOICES = [1, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 9, 10, 12, 15, 18, 20,
               21, 22, 24, 25, 28, 30, 35, 40, 45, 50, 54, 60, 65, 70, 75, 80, 85, 90, 95]


def _fmt_num(x):
    return str(int(x)) if float(x).is_integer() else str(x)


def pct_draw(p, rng):
    c = p.get("choices") or [x for x in PCT_CHOICES if p["lo"] <= x <= p["hi"]]
    return rng.choice(c)


def pct_forms(v, p):
    s = _fmt_num(v)
    out = [s + "%", s + " percent", s + " per cent"]
    if float(v).is_integer() and v <= 100:
        out.append(words(int(v)) + " percent")
    elif float(v) * 2 == int(float(v) * 2) and v < 20:
        out.append(words(int(v)) + " and a half percent" if int(v) else "half a percent")
    if v == 50 and p.get("of_ok"):
        out.append("half")
    return out


def pct_change(v, p, rng):
    c = p.get("choices") or [x for x in PCT_CHOICES if p["lo"] <= x <= p["hi"]]
    s = _fmt_num(v)
    if rng.random() < 0.2:
        t = s.replace(".", "")
        if len(t) == 2 and t[0] != t[1]:
            if "." in s:
                w = float(s[-1] + "." + s[0])
            else:
                w = int(s[::-1])
            if p.get("lo", 0) <= w <= p.get("hi", 100) and w != v:
                return w
    return _near_int(v, 0, 1000, rng, c)


# ---------------------------------------------------------------- year
def year_draw(p, rng):
    if "choices" in p:
        return rng.choice(p["choices"])
    return rng.randint(p["lo"], p["hi"])


def year_forms(v, p):
    out = [str(v)] if p.get("no_apos") else [str(v), "'" + str(v)[2:]]
    if p.get("the_year"):
        out.append("the year " + str(v))
    return out


def year_change(v, p, rng):
    if rng.random() < 0.2:
        s = str(v)
        w = int(s[:2] + s[3] + s[2])
        lo, hi = p.get("lo", min(p.get("choices", [v]))), p.get("hi", max(p.get("choices", [v])))
        if w != v and lo <= w <= hi:
            return w
    return _near_int(v, p.get("lo", 1900), p.get("hi", 2100), rng, p.get("choices"))


# ---------------------------------------------------------------- month
def month_draw(p, rng):
    return rng.randrange(12)


def month_forms(v, p):
    out = [MONTHS[v]]
    if MONTH_ABBR[v] != MONTHS[v]:
        out += [MONTH_ABBR[v], MONTH_ABBR[v] + "."]
    if v == 8:
        out.append("Sep")
    return out


def month_change(v, p, rng):
    if rng.random() < 0.5:
        return (v + rng.choice([-1, 1])) % 12
    return rng.choice([m for m in range(12) if m != v])


# ---------------------------------------------------------------- date
def date_draw(p, rng):
    m = rng.randrange(12)
    return (m, rng.randint(1, DAYS_IN[m] if m != 1 else 28))


def date_forms(v, p):
    m, d = v
    M = MONTHS[m]
    out = ["%s %d" % (M, d), "%s %s" % (M, ord_digits(d)), "%d %s" % (d, M),
           "the %s of %s" % (ord_digits(d), M), "%s %s" % (M, ord_words(d)),
           "%s %d" % (MONTH_ABBR[m], d)]
    return out


def date_change(v, p, rng):
    m, d = v
    r = rng.random()
    if r < 0.4:
        d2 = d + rng.choice([-2, -1, 1, 2])
        if 1 <= d2 <= 28:
            return (m, d2)
    if r < 0.6 and d <= 12 and m + 1 != d:
        return (d - 1, m + 1) if (m + 1) <= 28 else None
    if r < 0.85:
        return ((m + rng.choice([-1, 1])) % 12, min(d, 28))
    return (rng.randrange(12), rng.randint(1, 28))


# ---------------------------------------------------------------- durations
MIN_PER = {"minute": 1, "hour": 60, "day": 1440, "week": 10080}
SCALES = {
    "short": [("minute", [5, 10, 15, 20, 30, 40, 45, 90, 120]),
              ("hour", [1, 2, 3, 4, 5, 6, 8, 10, 12])],
    "days": [("hour", [12, 24, 36, 48, 72]), ("day", [1, 2, 3, 4, 5, 7, 10, 14, 21, 30]),
             ("week", [1, 2, 3, 4, 6, 8])],
    "long": [("month", [1, 2, 3, 6, 9, 18, 24, 36]), ("year", [1, 2, 3, 5, 10])],
}
SPECIAL = {(1, "hour"): ["an hour", "one hour"], (1, "day"): ["a day", "one day"],
           (1, "week"): ["a week", "one week"], (2, "week"): ["a fortnight"],
           (1, "month"): ["a month", "one month"], (1, "year"): ["a year", "one year"],
           (6, "month"): ["half a year"], (18, "month"): ["a year and a half"],
           (10, "year"): ["a decade"], (30, "minute"): ["half an hour"],
           (15, "minute"): ["a quarter of an hour"], (90, "minute"): ["an hour and a half"],
           (36, "hour"): ["a day and a half"], (45, "minute"): ["three quarters of an hour"]}


def _canon(n, unit):
    if unit in MIN_PER:
        return ("min", n * MIN_PER[unit])
    return ("mon", n * (12 if unit == "year" else 1))


def _base_forms(n, unit):
    out = []
    if n == 1:
        out += ["1 " + unit]
    else:
        out += ["%d %ss" % (n, unit), "%s %ss" % (words(n), unit)]
        if unit == "minute":
            out.append("%d mins" % n)
        if unit == "hour" and n <= 12:
            out.append("%d hrs" % n)
    out += SPECIAL.get((n, unit), [])
    return out


def dur_forms(v, p):
    n, unit = v
    kind, total = _canon(n, unit)
    out = list(_base_forms(n, unit))
    if kind == "min":
        for u, per in MIN_PER.items():
            if u == unit or total % per:
                continue
            m = total // per
            if u == "minute" and m > 180:
                continue
            if u == "hour" and m > 72:
                continue
            if u == "day" and m > 60:
                continue
            out += _base_forms(m, u)
        if total == 90:
            out += ["1.5 hours", "one and a half hours"]
    else:
        if unit == "month" and n % 12 == 0:
            out += _base_forms(n // 12, "year")
        if unit == "year" and n <= 3:
            out += _base_forms(n * 12, "month")
        if unit == "month" and n == 18:
            out += ["1.5 years", "one and a half years"]
    seen, res = set(), []
    for x in out:
        if x not in seen:
            seen.add(x)
            res.append(x)
    return res


def dur_draw(p, rng):
    unit, ns = rng.choice(SCALES[p["scale"]])
    return (rng.choice(ns), unit)


def dur_change(v, p, rng):
    n, unit = v
    scale = SCALES[p["scale"]]
    units = [u for u, _ in scale]
    c0 = _canon(n, unit)
    for _ in range(20):
        r = rng.random()
        if r < 0.35 and len(units) > 1:
            u2 = rng.choice([u for u in units if u != unit])
            w = (n, u2)
        elif r < 0.75:
            ns = dict(scale)[unit]
            i = ns.index(n) if n in ns else 0
            j = min(max(i + rng.choice([-1, 1]), 0), len(ns) - 1)
            w = (ns[j], unit)
        else:
            u2, ns = rng.choice(scale)
            w = (rng.choice(ns), u2)
        if _canon(*w) != c0:
            return w
    return None


# ---------------------------------------------------------------- temperature
def oven_draw(p, rng):
    if rng.random() < 0.8:
        return (rng.choice([300, 325, 350, 375, 400, 425, 450]), "F")
    return (rng.choice([160, 170, 180, 190, 200, 220, 230]), "C")


def oven_forms(v, p):
    n, u = v
    if u == "F":
        return ["%d\u00b0F" % n, "%d degrees" % n, "%d degrees F" % n,
                "%d degrees Fahrenheit" % n, "%dF" % n, "%d \u00b0F" % n]
    return ["%d\u00b0C" % n, "%d degrees C" % n, "%d degrees Celsius" % n, "%dC" % n]


def oven_change(v, p, rng):
    n, u = v
    if rng.random() < 0.25 and 160 <= n <= 230:
        return (n, "F" if u == "C" else "C")
    c = [300, 325, 350, 375, 400, 425, 450] if u == "F" else [160, 170, 180, 190, 200, 220, 230]
    return (_near_int(n, 0, 1000, rng, c), u)


def body_draw(p, rng):
    return rng.choice([99, 99.5, 100, 100.4, 101, 101.5, 102, 102.5, 103, 104])


def body_forms(v, p):
    s = _fmt_num(v)
    return [s + "\u00b0F", s + " F", s + " degrees", s + " degrees Fahrenheit", s + " \u00b0F"]


def body_change(v, p, rng):
    return _near_int(v, 0, 1000, rng, [99, 99.5, 100, 100.4, 101, 101.5, 102, 102.5, 103, 104])


# ---------------------------------------------------------------- clock time
def clock_draw(p, rng):
    h = rng.randint(p.get("lo", 0), p.get("hi", 23))
    m = rng.choice([0, 0, 0, 0, 15, 30, 45])
    return (h, m)


def clock_forms(v, p):
    h, m = v
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    out = []
    if m == 0:
        out += ["%d %s" % (h12, ap), "%d%s" % (h12, ap), "%d:00 %s" % (h12, ap),
                "%d %s" % (h12, ap.upper()), "%02d:00" % h]
        if h == 12:
            out += ["noon", "12 noon"]
        if h == 0:
            out += ["midnight"]
        if 13 <= h <= 17:
            out.append("%s in the afternoon" % words(h12))
        if 6 <= h <= 11:
            out.append("%s in the morning" % words(h12))
        if 18 <= h <= 21:
            out.append("%s in the evening" % words(h12))
    else:
        out += ["%d:%02d %s" % (h12, m, ap), "%d:%02d%s" % (h12, m, ap), "%02d:%02d" % (h, m)]
        if m == 30:
            out.append("half past %s %s" % (words(h12), ap))
        if m == 15:
            out.append("quarter past %s %s" % (words(h12), ap))
    return out


def clock_change(v, p, rng):
    h, m = v
    r = rng.random()
    if r < 0.3:
        return ((h + 12) % 24, m)
    if r < 0.7:
        return ((h + rng.choice([-1, 1])) % 24, m)
    if r < 0.85 and m in (15, 45, 30):
        return (h, {15: 45, 45: 15, 30: 0}[m])
    return (h, rng.choice([x for x in (0, 15, 30, 45) if x != m]))


# ---------------------------------------------------------------- ordinal
def ord_draw(p, rng):
    return rng.randint(p["lo"], p["hi"])


def ord_forms(v, p):
    return [ord_digits(v), ord_words(v)]


def ord_change(v, p, rng):
    return _near_int(v, p["lo"], p["hi"], rng)


# ---------------------------------------------------------------- weight
def weight_draw(p, rng):
    if rng.random() < 0.5:
        return (rng.choice(p.get("kg", [0.5, 1, 1.5, 2, 2.5, 3])), "kg")
    return (rng.choice(p.get("lb", [1, 2, 3, 4, 5, 6, 8, 10])), "lb")


def weight_forms(v, p):
    n, u = v
    attr = p.get("attr")
    s = _fmt_num(n)
    if u == "kg":
        g = int(round(n * 1000))
        if attr:
            out = ["%s kg" % s, "%s-kilo" % s, "%s-kilogram" % s, "%d-gram" % g, "%d g" % g]
            if float(n).is_integer():
                out.append("%s-kilogram" % words(int(n)))
        else:
            out = ["%s kg" % s, "%s kilos" % s if n != 1 else "1 kilo", "%d grams" % g,
                   "%s grams" % commas(g), "%d g" % g]
            if n == 1:
                out += ["a kilo", "one kilogram"]
            elif n == 0.5:
                out += ["half a kilo"]
            elif float(n).is_integer():
                out.append("%s kilograms" % words(int(n)))
        return list(dict.fromkeys(out))
    oz = int(n * 16)
    if attr:
        out = ["%s lb" % s, "%s-pound" % s, "%s-lb" % s]
        if float(n).is_integer():
            out.append("%s-pound" % words(int(n)))
    else:
        out = ["%s lb" % s, "%s lbs" % s if n != 1 else "1 lb.", "%s pounds" % s if n != 1 else "1 pound",
               "%d ounces" % oz]
        if n == 1:
            out += ["a pound", "one pound", "16 oz"]
        elif float(n).is_integer():
            out.append("%s pounds" % words(int(n)))
    return list(dict.fromkeys(out))


def weight_change(v, p, rng):
    n, u = v
    if rng.random() < 0.3:
        return (n, "lb" if u == "kg" else "kg")
    c = p.get(u, [0.5, 1, 1.5, 2, 2.5, 3] if u == "kg" else [1, 2, 3, 4, 5, 6, 8, 10])
    return (_near_int(n, 0, 10 ** 6, rng, c), u)


# ---------------------------------------------------------------- distance
def dist_draw(p, rng):
    if rng.random() < 0.55:
        return (rng.choice([1, 2, 3, 5, 6, 10, 13.1, 26.2]), "mi")
    return (rng.choice([1, 3, 5, 10, 15, 21.1, 42.2]), "km")


def dist_forms(v, p):
    n, u = v
    s = _fmt_num(n)
    if u == "mi":
        out = ["%s miles" % s if n != 1 else "1 mile", "%s mi" % s]
        if float(n).is_integer():
            out.append("%s miles" % words(int(n)) if n != 1 else "one mile")
        if n == 26.2 and not p.get("no_race"):
            out.append("a marathon")
        if n == 13.1 and not p.get("no_race"):
            out.append("a half marathon")
        return out
    out = ["%s km" % s, "%s kilometers" % s if n != 1 else "1 kilometer",
           "%s meters" % commas(int(n * 1000))]
    if float(n).is_integer():
        out.append("%s kilometers" % words(int(n)) if n != 1 else "one kilometer")
    if n in (5, 10, 15) and not p.get("no_race"):
        out.append("%dK" % n)
    return out


def dist_change(v, p, rng):
    n, u = v
    if rng.random() < 0.35 and n not in (13.1, 26.2, 21.1, 42.2):
        return (n, "km" if u == "mi" else "mi")
    c = [1, 2, 3, 5, 6, 10, 13.1, 26.2] if u == "mi" else [1, 3, 5, 10, 15, 21.1, 42.2]
    return (_near_int(n, 0, 10 ** 6, rng, c), u)


# ---------------------------------------------------------------- data size
def data_draw(p, rng):
    r = rng.random()
    if r < 0.7:
        return (rng.choice([1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500]), "GB")
    if r < 0.85:
        return (rng.choice([100, 200, 500, 800]), "MB")
    return (rng.choice([1, 2, 4, 5]), "TB")


def data_forms(v, p):
    n, u = v
    full = {"GB": "gigabyte", "MB": "megabyte", "TB": "terabyte"}[u]
    out = ["%d %s" % (n, u), "%d%s" % (n, u), "%d %ss" % (n, full) if n != 1 else "1 " + full]
    if wordable(n):
        out.append("%s %ss" % (words(n), full) if n != 1 else "one " + full)
    if u == "GB" and n > 1:
        out.append("%d gigs" % n)
    if n == 1:
        out.append("a " + full)
    return out


def data_change(v, p, rng):
    n, u = v
    if rng.random() < 0.3:
        return (n, rng.choice([x for x in ("GB", "MB", "TB") if x != u]))
    c = {"GB": [1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500], "MB": [100, 200, 500, 800],
         "TB": [1, 2, 4, 5]}[u]
    return (_near_int(n, 0, 10 ** 6, rng, c), u)


# ---------------------------------------------------------------- speed
def speed_draw(p, rng):
    if rng.random() < 0.85:
        return (rng.choice([10, 25, 50, 100, 200, 300, 500, 1000]), "Mbps")
    return (rng.choice([10, 25, 50, 100]), "MB/s")


def speed_forms(v, p):
    n, u = v
    if u == "Mbps":
        out = ["%d Mbps" % n, "%dMbps" % n, "%d megabits per second" % n, "%d meg" % n]
        if n == 1000:
            out += ["1 Gbps", "1 gig", "gigabit", "1 gigabit per second"]
        return out
    return ["%d MB/s" % n, "%d megabytes per second" % n, "%d MB per second" % n]


def speed_change(v, p, rng):
    n, u = v
    if rng.random() < 0.3:
        return (n, "MB/s" if u == "Mbps" else "Mbps")
    c = [10, 25, 50, 100, 200, 300, 500, 1000] if u == "Mbps" else [10, 25, 50, 100]
    return (_near_int(n, 0, 10 ** 6, rng, c), u)


QTYPES = {
    "count": (count_draw, count_forms, count_change),
    "money": (money_draw, money_forms, money_change),
    "pct": (pct_draw, pct_forms, pct_change),
    "year": (year_draw, year_forms, year_change),
    "month": (month_draw, month_forms, month_change),
    "date": (date_draw, date_forms, date_change),
    "dur": (dur_draw, dur_forms, dur_change),
    "oven": (oven_draw, oven_forms, oven_change),
    "body": (body_draw, body_forms, body_change),
    "clock": (clock_draw, clock_forms, clock_change),
    "ord": (ord_draw, ord_forms, ord_change),
    "weight": (weight_draw, weight_forms, weight_change),
    "dist": (dist_draw, dist_forms, dist_change),
    "data": (data_draw, data_forms, data_change),
    "speed": (speed_draw, speed_forms, speed_change),
}

R = lambda lo, hi: {"lo": lo, "hi": hi}
C = lambda *xs: {"choices": list(xs), "lo": min(xs), "hi": max(xs)}

# (template, qtype, params)
FRAMES = [
    # ------------------------------------------------------------- counts
    ("how much does it cost to check {q} bags on {AIRLINE}", "count", R(2, 4)),
    ("how many calories are in {q} eggs", "count", R(2, 6)),
    ("what's the price of {q} tickets to the {TEAM} game", "count", R(2, 8)),
    ("can {q} adults stay in one room at {HOTEL}", "count", R(2, 6)),
    ("how long does it take to walk {q} miles", "count", R(2, 15)),
    ("what's the automatic tip for a party of {q} at {REST}", "count", R(4, 12)),
    ("what's the average rent for a {q}-bedroom apartment in {CITY}", "count", R(1, 4)),
    ("what size tankless water heater do I need for {q} bathrooms", "count", R(2, 4)),
    ("how much paint do I need for {q} bedrooms", "count", R(2, 5)),
    ("is {q} hours of sleep enough for a teenager", "count", R(5, 10)),
    ("how many vacation days do I get after {q} years at {COMPANY}", "count", R(2, 10)),
    ("how much does it cost to add {q} lines to my {CARRIER} plan", "count", R(2, 5)),
    ("what's the monthly payment on a {q}-year car loan for $30,000", "count", R(3, 7)),
    ("how much interest will I pay on a {q}-year mortgage of $300,000 at 6%", "count",
     C(10, 15, 20, 25, 30)),
    ("how long do I roast a {q}-pound turkey", "count", R(10, 24)),
    ("how many people does a {q}-inch pizza feed", "count", C(8, 10, 12, 14, 16, 18)),
    ("what's the best TV size if I sit {q} feet away", "count", R(5, 12)),
    ("how long do {q} coats of polyurethane take to dry", "count", R(2, 4)),
    ("how much less tax is withheld if I claim {q} dependents on my W-4", "count", R(2, 5)),
    ("what's the square root of {q}", "count", C(2, 3, 5, 8, 10, 12, 18, 20, 24, 27, 32, 45, 50,
                                                  64, 72, 80, 90, 99, 120, 150, 200)),
    ("what is {q} squared", "count", R(11, 99)),
    ("is {q} a prime number", "count", C(21, 23, 27, 29, 31, 33, 37, 39, 41, 49, 51, 53, 57, 59,
                                         61, 87, 89, 91, 97, 101, 111, 113, 119, 121)),
    ("what's {q} factorial", "count", R(5, 15)),
    ("how do I write {q} in Roman numerals", "count", C(14, 19, 24, 40, 49, 90, 99, 400, 900,
                                                        1987, 1999, 2024, 2025)),
    ("how many weeks is {q} days", "count", C(10, 20, 30, 45, 60, 75, 90, 100, 120)),
    ("what's the area of a circle with a radius of {q} cm", "count", R(2, 20)),
    ("how many points is {q} touchdowns", "count", R(2, 6)),
    ("how much is {q} nights at {HOTEL} in {MONTH}", "count", R(2, 10)),
    ("how much water should a {q}-pound dog drink a day", "count", C(10, 20, 30, 40, 50, 60, 70,
                                                                     80)),
    ("what's the dose of children's {DRUG} for a {q}-pound kid", "count",
     C(20, 25, 30, 35, 40, 45, 50, 60, 70, 80)),
    ("how many amps does a {q}-watt microwave draw", "count",
     dict(C(600, 700, 800, 900, 1000, 1100, 1200), digits_only=True)),
    ("what gauge wire do I need for a {q}-amp circuit", "count", C(15, 20, 30, 40, 50, 60)),
    ("how many BTUs do I need to heat a {q}-square-foot room", "count",
     dict(C(150, 200, 300, 400, 500, 600, 800, 1000), digits_only=True)),
    ("how long does it take to read {q} words", "count", C(500, 1000, 1500, 2000, 5000, 10000)),
    ("how many pages is {q} words double-spaced", "count", C(500, 1000, 1500, 2000, 3000, 5000)),
    ("how many calories do I burn taking {q} steps", "count", C(5000, 8000, 10000, 12000, 15000,
                                                                20000)),
    ("what's the monthly cost of {CARRIER}'s plan for {q} lines", "count", R(2, 6)),
    ("how many credits do I need to take {q} classes at {SCHOOL}", "count", R(2, 6)),
    ("how many bags of mulch do I need for {q} square feet", "count",
     dict(C(50, 100, 150, 200, 300, 500), digits_only=True)),
    ("how much does it cost to pave a driveway for {q} cars", "count", R(1, 4)),
    ("what should a {q}-month-old baby be eating", "count", R(4, 12)),
    ("how many hours a day should a {q}-year-old sleep", "count", R(1, 17)),
    ("can a {q}-year-old open a bank account at {BANK}", "count", R(10, 18)),
    ("can I still contribute to a Roth IRA at {q}", "count", R(50, 80)),
    ("what's a normal resting heart rate for a {q}-year-old", "count", R(5, 80)),
    ("can I retire at {q} with $800,000 saved", "count", R(50, 67)),
    ("how much Social Security will I get if I claim at {q}", "count", R(62, 70)),
    ("can a {q}-year-old fly alone on {AIRLINE}", "count", R(5, 17)),
    ("what grade is a {q}-year-old in", "count", R(5, 17)),
    ("what's the shipping cost for {q} packages from {STORE}", "count", R(2, 8)),
    ("how many boxes do I need to move a {q}-bedroom house", "count", R(1, 5)),
    ("how many people can sit at a {q}-foot table", "count", R(4, 10)),
    ("how many hours can a {q}-year-old work in {STATE}", "count", R(13, 17)),
    ("what's the fee for a {q}-day pass to {VENUE}", "count", R(1, 5)),
    # ------------------------------------------------------------- money
    ("how much should I tip on a {q} bill at 20%", "money", {"attr": True, "lo": 20, "hi": 600,
                                                                 "usd_only": True}),
    ("what's the monthly payment on a {q} car loan over 5 years", "money",
     {"attr": True, "lo": 10000, "hi": 60000}),
    ("how much house can I afford on a {q} salary", "money", {"attr": True, "lo": 40000, "hi": 200000,
                                                              "usd_only": True}),
    ("how much tax will I owe on {q} of freelance income", "money", {"lo": 5000, "hi": 150000}),
    ("do I need to report a {q} gift to the IRS", "money", {"attr": True, "lo": 5000, "hi": 100000}),
    ("is a {q} deposit enough for an apartment in {CITY}", "money", {"attr": True, "lo": 500, "hi": 5000}),
    ("how much interest will {q} earn in a high-yield savings account at 4.5%", "money",
     {"lo": 1000, "hi": 100000}),
    ("will {BANK} flag a cash withdrawal of {q}", "money", {"lo": 2000, "hi": 15000}),
    ("what's the fee for sending {q} internationally with {BANK}", "money",
     {"lo": 100, "hi": 10000}),
    ("is {q} a fair price for a used {CAR}", "money", {"lo": 5000, "hi": 40000}),
    ("can I withdraw {q} from a {BANK} ATM in one day", "money", {"lo": 200, "hi": 3000}),
    ("what's the penalty for taking {q} out of my 401(k) early", "money",
     {"lo": 5000, "hi": 50000}),
    ("if I make {q} an hour, what's my yearly salary", "money",
     {"lo": 15, "hi": 80, "extra": [15, 18, 22, 35, 45, 65], "usd_only": True}),
    ("how much is overtime if my rate is {q} an hour", "money",
     {"lo": 15, "hi": 80, "extra": [15, 18, 22, 35, 45, 65], "usd_only": True}),
    ("how much will {q} grow to in 10 years at 7%", "money", {"lo": 1000, "hi": 100000}),
    ("what's the sales tax on a {q} purchase in {STATE}", "money", {"attr": True, "lo": 20, "hi": 5000,
                                                                    "usd_only": True}),
    ("how much is a {q} engagement ring to insure with {INSCO}", "money",
     {"attr": True, "lo": 2000, "hi": 20000}),
    ("is {q} a month enough to live on in {CITY}", "money", {"lo": 1000, "hi": 8000}),
    ("how much should I save per month to have {q} in 5 years", "money",
     {"lo": 5000, "hi": 100000}),
    ("how much is the capital gains tax on a {q} profit", "money", {"attr": True, "lo": 1000, "hi": 250000}),
    ("what credit score do I need for a {q} personal loan", "money", {"attr": True, "lo": 1000, "hi": 50000}),
    ("how much does {INSCO} charge for {q} of renters coverage", "money",
     {"lo": 10000, "hi": 100000}),
    ("can I put {q} on a {BANK} credit card with a $5,000 limit", "money",
     {"lo": 1000, "hi": 8000, "usd_only": True}),
    ("how much is the late fee on a {q} rent payment", "money", {"attr": True, "lo": 500, "hi": 5000}),
    ("how much can I sell a {q} gift card for", "money", {"attr": True, "lo": 20, "hi": 500, "usd_only": True}),
    # ------------------------------------------------------------- percent
    ("what's the monthly payment on a $250,000 mortgage at {q} interest", "pct", R(2, 9)),
    ("what is {q} of 80", "pct", dict(R(5, 95), of_ok=True)),
    ("how much is a {q} tip on a $64 bill", "pct", C(10, 12, 15, 18, 20, 22, 25)),
    ("what's a {q} raise on a $60,000 salary", "pct", R(1, 12)),
    ("is {q} APR good for a credit card", "pct", R(10, 30)),
    ("what's the sale price of a $120 jacket at {q} off", "pct", C(10, 15, 20, 25, 30, 40, 50,
                                                                   60, 70, 75)),
    ("my battery health is {q}, should I replace the battery", "pct", R(65, 95)),
    ("how long will my phone last at {q} battery", "pct", C(5, 10, 15, 20, 25, 30, 50)),
    ("is {q} humidity too high for a basement", "pct", R(35, 85)),
    ("what does a {q} chance of rain mean", "pct", C(10, 20, 30, 40, 50, 60, 70, 80, 90)),
    ("how do I calculate {q} sales tax on $45", "pct", C(5, 6, 6.5, 7, 7.5, 8, 9, 9.5, 10)),
    ("how does my take-home pay change if I put {q} into my 401(k)", "pct", R(2, 15)),
    ("is {q} body fat healthy for a man", "pct", R(8, 35)),
    ("how much is a {q} down payment on a $400,000 house", "pct", C(3, 3.5, 5, 10, 15, 20, 25)),
    ("what's {q} of $2,500", "pct", dict(R(2, 95), of_ok=True)),
    ("how much will I pay on a $10,000 loan at {q} APR over 3 years", "pct", R(3, 30)),
    ("what's my grade if I got {q} on the final and it's worth 40%", "pct", R(40, 95)),
    ("what does a {q} vacancy rate mean for rent in {CITY}", "pct", R(1, 12)),
    ("is a {q} dividend yield sustainable", "pct", R(1, 12)),
    ("how much does my payment change if my rate goes up {q}", "pct", C(0.5, 1, 1.5, 2, 2.5, 3)),
    ("is a {q} property tax rate high", "pct", C(0.5, 1, 1.5, 2, 2.5, 3)),
    # ------------------------------------------------------------- years
    ("how old is someone born in {q}", "year", R(1950, 2015)),
    ("who won the World Cup in {q}", "year", C(*range(1966, 2023, 4))),
    ("what's the Roth IRA contribution limit for {q}", "year", R(2018, 2026)),
    ("is a {q} {CAR} a reliable used car", "year", R(2005, 2022)),
    ("what day of the week was January 1, {q}", "year", R(1970, 2030)),
    ("is {q} a leap year", "year", dict(R(1896, 2099), no_apos=True)),
    ("will my {q} Kestrel laptop still get security updates", "year", R(2015, 2023)),
    ("what was the federal minimum wage in {q}", "year", R(1980, 2024)),
    ("what's the standard deduction for {q}", "year", R(2018, 2026)),
    ("when is the deadline to file my {q} tax return", "year", R(2019, 2025)),
    ("what were the 401(k) catch-up limits in {q}", "year", R(2015, 2026)),
    ("what movies won Best Picture in {q}", "year", R(1975, 2024)),
    ("how much is a {q} penny worth", "year", C(1943, 1955, 1969, 1972, 1982, 1983, 1992, 1995)),
    ("what was the inflation rate in {q}", "year", R(1975, 2024)),
    ("what was the top tax bracket in {q}", "year", R(1960, 2024)),
    ("what's the resale value of a {q} Tessaro hatchback", "year", R(2008, 2022)),
    # ------------------------------------------------------------- months
    ("what's the weather like in {CITY} in {q}", "month", {}),
    ("is {q} a good time to visit {COUNTRY}", "month", {}),
    ("what vegetables can I plant in {q} in zone 7", "month", {}),
    ("are flights to {CITY} cheaper in {q}", "month", {}),
    ("are there any federal holidays in {q}", "month", {}),
    ("can I sign up for health insurance in {q}", "month", {}),
    ("what fish are in season in {q}", "month", {}),
    ("is it hurricane season in the Caribbean in {q}", "month", {}),
    ("what's the average water temperature in {CITY} in {q}", "month", {}),
    ("what should I do in my garden in {q}", "month", {}),
    ("is {CITY} crowded in {q}", "month", {}),
    # ------------------------------------------------------------- dates
    ("what day of the week is {q} this year", "date", {}),
    ("is {q} a federal holiday", "date", {}),
    ("what's the zodiac sign for someone born on {q}", "date", {}),
    ("how many days until {q}", "date", {}),
    ("is the DMV open on {q}", "date", {}),
    ("when is my payment due if my bill date is {q} and I get a 21-day grace period", "date", {}),
    ("what famous people were born on {q}", "date", {}),
    ("is {STORE} open on {q}", "date", {}),
    ("what happened in history on {q}", "date", {}),
    ("can I still get a refund if I cancel on {q} for a trip on the 30th", "date", {}),
    # ------------------------------------------------------------- durations
    ("my flight was delayed {q}, does {AIRLINE} owe me compensation", "dur", {"scale": "short"}),
    ("how many calories do I burn running for {q}", "dur", {"scale": "short"}),
    ("is it safe to leave cooked chicken out for {q}", "dur", {"scale": "short"}),
    ("can I leave my dog home alone for {q}", "dur", {"scale": "short"}),
    ("my {DEV} has been charging for {q} and it's still at 10%, is that normal", "dur",
     {"scale": "short"}),
    ("how much should I charge to babysit for {q}", "dur", {"scale": "short"}),
    ("is a commute of {q} too long", "dur", {"scale": "short"}),
    ("how much does parking at the {CITY} airport cost for {q}", "dur", {"scale": "days"}),
    ("is it normal to have a fever for {q}", "dur", {"scale": "days"}),
    ("can I return shoes to {STORE} after {q}", "dur", {"scale": "days"}),
    ("how much does a rental car cost for {q} in {CITY}", "dur", {"scale": "days"}),
    ("my package has been in transit for {q}, should I contact {STORE}", "dur",
     {"scale": "days"}),
    ("what happens if I pay my {UTILITY} bill {q} late", "dur", {"scale": "days"}),
    ("is {q} enough notice to quit my job", "dur", {"scale": "days"}),
    ("can I leave my car parked on the street for {q} in {CITY}", "dur", {"scale": "days"}),
    ("should I be worried if my cat hasn't eaten in {q}", "dur", {"scale": "days"}),
    ("can I get a refund if I cancel my {AIRLINE} flight {q} before departure", "dur",
     {"scale": "days"}),
    ("how much will staying {q} at {HOTEL} cost", "dur", {"scale": "days"}),
    ("how long can I keep leftovers in the fridge if they've been there {q}", "dur",
     {"scale": "days"}),
    ("is it normal for a cold to last {q}", "dur", {"scale": "days"}),
    ("my check has been on hold at {BANK} for {q}, is that normal", "dur", {"scale": "days"}),
    ("how much will I earn on $5,000 in a CD for {q}", "dur", {"scale": "long"}),
    ("will {BANK} close my account if I don't use it for {q}", "dur", {"scale": "long"}),
    ("is my {DEV} still under warranty after {q}", "dur", {"scale": "long"}),
    ("I've been at my job for {q}, am I eligible for FMLA", "dur", {"scale": "long"}),
    ("how much does it cost to store furniture for {q}", "dur", {"scale": "long"}),
    ("what happens if I don't file my taxes for {q}", "dur", {"scale": "long"}),
    ("can I stay in {COUNTRY} for {q} as a tourist", "dur", {"scale": "long"}),
    ("how much interest will I pay on a $20,000 loan over {q}", "dur", {"scale": "long"}),
    ("is it normal for a baby not to walk at {q}", "dur", {"scale": "long"}),
    ("how much PTO will I have accrued after {q} at {COMPANY}", "dur", {"scale": "long"}),
    ("can I break my lease after {q}", "dur", {"scale": "long"}),
    ("how much would {q} of membership at {GYM} cost", "dur", {"scale": "long"}),
    ("what happens to my credit score {q} after a missed payment", "dur", {"scale": "long"}),
    ("how much will my car depreciate in {q}", "dur", {"scale": "long"}),
    # ------------------------------------------------------------- temperatures
    ("how long do I bake chicken breasts at {q}", "oven", {}),
    ("how long should I roast potatoes at {q}", "oven", {}),
    ("how long do cookies take at {q}", "oven", {}),
    ("can I bake sourdough at {q}", "oven", {}),
    ("how long should a frozen pizza cook at {q}", "oven", {}),
    ("how long do I roast salmon at {q}", "oven", {}),
    ("is {q} a fever for an adult", "body", {}),
    ("should I take my kid to the ER with a temperature of {q}", "body", {}),
    ("is a {q} fever dangerous for a toddler", "body", {}),
    # ------------------------------------------------------------- clock times
    ("is {STORE} open at {q} on Sundays", "clock", {"lo": 6, "hi": 23}),
    ("can I check in at {HOTEL} at {q}", "clock", {"lo": 6, "hi": 23}),
    ("what time is {q} Eastern in Pacific time", "clock", {}),
    ("is there a train out of {CITY} after {q}", "clock", {"lo": 17, "hi": 23}),
    ("is parking free in downtown {CITY} after {q}", "clock", {"lo": 15, "hi": 23}),
    ("can I call {BANK} customer service at {q}", "clock", {}),
    ("is {q} too late to drink coffee if I sleep at 11", "clock", {"lo": 11, "hi": 21}),
    ("what's the tide doing in {CITY} at {q} tomorrow", "clock", {}),
    ("is the pharmacy at {PHARMACY} open at {q}", "clock", {"lo": 6, "hi": 23}),
    # ------------------------------------------------------------- ordinals
    ("what does the {q} amendment protect", "ord", R(1, 10)),
    ("what happens in the {q} trimester of pregnancy", "ord", R(1, 3)),
    ("what's the {q} step of CPR", "ord", R(1, 5)),
    ("who won the {q} season of {SHOW}", "ord", R(1, 10)),
    ("what's the {q} book in the {SERIES} series about", "ord", R(1, 8)),
    ("what are the penalties for a {q} DUI in {STATE}", "ord", R(1, 3)),
    ("what's the penalty for a {q} shoplifting offense in {STATE}", "ord", R(1, 3)),
    ("who was the {q} president of the United States", "ord", R(1, 46)),
    ("what's on the {q} floor of {VENUE}", "ord", R(1, 6)),
    ("how much is the {q} checked bag on {AIRLINE}", "ord", R(1, 4)),
    ("when is the {q} estimated tax payment due", "ord", R(1, 4)),
    ("what's the {q} planet from the sun", "ord", R(1, 8)),
    ("what do kids learn in {q} grade math", "ord", R(1, 8)),
    ("what's covered in chapter {q} of the driver's handbook", "count", R(1, 12)),
    ("what does the {q} house in astrology represent", "ord", R(1, 12)),
    # ------------------------------------------------------------- weights
    ("how long do I roast a {q} chicken", "weight", {"attr": True, "kg": [1, 1.5, 2, 2.5],
                                                     "lb": [3, 4, 5, 6, 7]}),
    ("how much does it cost to ship a {q} package to {COUNTRY}", "weight", {"attr": True}),
    ("how many calories are in {q} of cooked rice", "weight", {}),
    ("is a {q} laptop too heavy to carry every day", "weight",
     {"attr": True, "kg": [1, 1.5, 2, 2.5, 3], "lb": [2, 3, 4, 5, 6]}),
    ("can I bring a {q} carry-on on {AIRLINE}", "weight",
     {"attr": True, "kg": [7, 8, 10, 12], "lb": [15, 18, 22, 25]}),
    ("how much pasta should I cook for {q} of sauce", "weight", {}),
    ("how long should I smoke {q} of brisket", "weight", {"kg": [2, 3, 4, 5], "lb": [4, 6, 8, 10, 12]}),
    ("how many people does {q} of ground beef feed", "weight", {}),
    ("is losing {q} a week safe", "weight", {"kg": [0.5, 1, 1.5, 2], "lb": [1, 2, 3, 4]}),
    # ------------------------------------------------------------- distances
    ("how long does it take to run {q}", "dist", {}),
    ("how many calories do I burn walking {q}", "dist", {}),
    ("how long does it take to cycle {q}", "dist", {"no_race": True}),
    ("how much would a rideshare for {q} cost in {CITY}", "dist", {"no_race": True}),
    ("how should I train to swim {q}", "dist", {"no_race": True}),
    ("is {q} a long way to walk to work", "dist", {"no_race": True}),
    # ------------------------------------------------------------- data and speed
    ("is {q} of data enough for a month", "data", {}),
    ("how long does it take to upload {q} to {CLOUD}", "data", {}),
    ("how much does {CLOUD} charge for {q} of storage", "data", {}),
    ("how many photos fit in {q}", "data", {}),
    ("how many hours of HD video is {q}", "data", {}),
    ("is {q} of RAM enough for video editing", "data", {}),
    ("is {q} fast enough for 4K streaming", "speed", {}),
    ("how long does it take to download a 50 GB game at {q}", "speed", {}),
    ("is {q} good for working from home with video calls", "speed", {}),
    ("is {q} enough internet for a family of five", "speed", {}),
    ("how much does {ISP} charge for {q} internet", "speed", {}),
]

# two-number frames: swapping the two numbers keeps the answer (symmetric),
# changing one of them changes it.
DIMS = [
    "how many square feet is a {x} by {y} room",
    "how many tiles do I need for a {x} by {y} foot floor",
    "how much carpet do I need for a {x} by {y} bedroom",
    "what's the area of a {x} by {y} rectangle",
    "what's the hypotenuse of a right triangle with legs {x} and {y}",
    "how much paint covers a {x} by {y} foot wall",
    "how many pavers for a {x} by {y} foot patio",
    "how much sod do I need for a {x}-by-{y}-foot yard",
    "what's the product of {x} and {y}",
    "what's the perimeter of a {x} by {y} garden",
    "how many square meters is a {x} by {y} meter apartment",
    "how big a rug fits a {x} by {y} living room",
]
