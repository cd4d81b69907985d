#!/usr/bin/env python3
"""Generate structure-focused training pairs for the cache-checker cross-encoder.

Deterministic (random.Random(0)), stdlib only. Writes train_structure.jsonl next to
this file: one {"a", "b", "label", "kind"} object per line.

All vocabulary, names and sentence frames below were written by hand for this file.
label 1 = the two questions ask for the same answer; label 0 = they do not.
"""
import json
import os
import random
import re

# ---------------------------------------------------------------------------
# Per-domain action phrases (base-form verb phrases, first word is the verb).
#   acts: actions used in the action-group frames
#   syn : pairs of action phrases that mean the same thing
#   opp : pairs of action phrases with opposite verbs/adjectives on one object
#   ww  : (action, noun phrase) for with/without frames
# ---------------------------------------------------------------------------
DOMAINS = {
    "cooking": dict(
        acts=["marinate chicken overnight", "freeze cooked rice", "reheat leftover pasta in the microwave",
              "sharpen a chef's knife", "proof bread dough in the fridge", "season a cast iron pan",
              "blanch green beans", "deglaze the pan with wine", "rest steak after grilling",
              "cook rice in a slow cooker"],
        syn=[("preheat the oven", "heat up the oven beforehand"), ("chop onions finely", "dice onions into small pieces"),
             ("thaw frozen shrimp", "defrost frozen shrimp"), ("make the sauce thicker", "thicken the sauce"),
             ("cook pasta al dente", "cook pasta so it's still firm to the bite")],
        opp=[("raise the oven temperature", "lower the oven temperature"), ("add more salt to the soup", "reduce the salt in the soup"),
             ("cover the pot while simmering", "uncover the pot while simmering"), ("thicken the gravy", "thin out the gravy"),
             ("speed up bread rising", "slow down bread rising")],
        ww=[("bake a cake", "eggs"), ("make pancakes", "milk"), ("fry eggs", "oil"), ("make bread", "a stand mixer"),
            ("cook risotto", "wine"), ("make pizza dough", "yeast")]),
    "gardening": dict(
        acts=["prune roses in late winter", "water succulents every day", "repot a snake plant",
              "plant tomatoes next to basil", "mulch around fruit trees", "use coffee grounds as fertilizer",
              "divide hostas in spring", "start seeds indoors under a lamp"],
        syn=[("get rid of aphids", "eliminate aphids"), ("grow lettuce in containers", "grow lettuce in pots"),
             ("make compost at home", "produce homemade compost"), ("kill weeds in the lawn", "wipe out the weeds in my lawn")],
        opp=[("increase soil acidity", "decrease soil acidity"), ("add nitrogen to the soil", "remove nitrogen from the soil"),
             ("speed up seed germination", "slow down seed germination"), ("raise the pH of the soil", "lower the pH of the soil")],
        ww=[("grow tomatoes", "a greenhouse"), ("start a vegetable garden", "raised beds"), ("kill weeds", "chemicals"),
            ("water the lawn", "a sprinkler")]),
    "programming": dict(
        acts=["rebase a feature branch onto main", "force push to a shared branch", "store API keys in environment variables",
              "use global variables in Python", "catch all exceptions in one block", "run database migrations in production",
              "squash commits before merging", "pin dependency versions"],
        syn=[("undo the last commit", "revert my most recent commit"), ("remove an element from a list", "delete an item from a list"),
             ("turn a string into an integer", "convert a string to an int"), ("find the length of an array", "get the size of an array"),
             ("sort a dictionary by value", "order a dict by its values")],
        opp=[("enable strict mode in TypeScript", "disable strict mode in TypeScript"),
             ("increase the Node.js memory limit", "decrease the Node.js memory limit"),
             ("add a column to a SQL table", "drop a column from a SQL table"), ("turn on debug logging", "turn off debug logging"),
             ("make a class field public", "make a class field private")],
        ww=[("parse JSON in JavaScript", "a library"), ("deploy a web app", "Docker"), ("write unit tests", "mocks"),
            ("make HTTP requests in Python", "the requests package")]),
    "cars": dict(
        acts=["jump start a car with a dead battery", "rotate the tires myself", "use regular fuel in a turbo engine",
              "drive on a spare tire for a week", "change the cabin air filter", "wash the car in direct sunlight",
              "warm up the engine before driving", "top up coolant when the engine is hot"],
        syn=[("check the tire pressure", "measure the air pressure in my tires"), ("replace the wiper blades", "change the windshield wipers"),
             ("fix a flat tire", "repair a punctured tire"), ("get rid of a musty smell in the car", "remove the damp smell from my car")],
        opp=[("increase tire pressure", "decrease tire pressure"), ("turn on traction control", "turn off traction control"),
             ("tighten the lug nuts", "loosen the lug nuts"), ("raise the suspension", "lower the suspension")],
        ww=[("start a car", "the key fob"), ("change a tire", "a jack"), ("drive in snow", "winter tires")]),
    "pets": dict(
        acts=["feed my cat raw fish", "bathe a dog every week", "give my dog ibuprofen", "leave a puppy alone overnight",
              "trim a rabbit's nails", "walk a dog in the rain", "keep two male hamsters together",
              "switch my cat to a new food suddenly"],
        syn=[("stop my dog from barking at the door", "keep my dog from barking at the door"), ("house train a puppy", "potty train a puppy"),
             ("calm an anxious cat", "soothe a nervous cat"), ("introduce a new kitten to my older cat", "get my old cat used to a new kitten")],
        opp=[("increase my dog's food portion", "reduce my dog's food portion"), ("add a second litter box", "remove the second litter box"),
             ("encourage my parrot to talk", "discourage my parrot from talking"), ("lengthen my dog's daily walks", "shorten my dog's daily walks")],
        ww=[("train a dog", "treats"), ("clean a fish tank", "a siphon"), ("travel with a cat", "a carrier")]),
    "sports": dict(
        acts=["stretch before a run", "play soccer with a sprained ankle", "use a heavier tennis racket",
              "swim right after eating", "tape my fingers for climbing", "ice a bruise straight away",
              "train for a marathon in eight weeks", "wear running shoes for basketball"],
        syn=[("get better at free throws", "improve my free throw shooting"), ("hit a golf ball farther", "increase my driving distance in golf"),
             ("learn to serve in volleyball", "pick up how to serve in volleyball"), ("build stamina for soccer", "improve my endurance for soccer")],
        opp=[("tighten my racket strings", "loosen my racket strings"), ("lengthen my running stride", "shorten my running stride"),
             ("raise the bike saddle", "lower the bike saddle"), ("speed up my swimming pace", "slow down my swimming pace")],
        ww=[("play tennis", "a coach"), ("learn to ski", "lessons"), ("go bouldering", "a crash pad")]),
    "music": dict(
        acts=["tune a guitar by ear", "practice piano for two hours a day", "change guitar strings all at once",
              "sing with a cold", "learn violin as an adult", "record vocals in a closet",
              "store a guitar near a radiator", "play drums in an apartment"],
        syn=[("read sheet music", "read musical notation"), ("transpose a song to a lower key", "move a song down to a lower key"),
             ("improve my vocal range", "extend my singing range"), ("memorize a piano piece", "learn a piano piece by heart")],
        opp=[("raise the action on my guitar", "lower the action on my guitar"), ("speed up the tempo", "slow down the tempo"),
             ("increase the reverb", "reduce the reverb"), ("turn on the noise gate", "turn off the noise gate")],
        ww=[("learn guitar", "a teacher"), ("record a podcast", "a pop filter"), ("play piano", "the sustain pedal")]),
    "science": dict(
        acts=["mix bleach and vinegar", "look at the sun through binoculars", "boil water in a microwave",
              "store dry ice in a sealed container", "touch mercury from a broken thermometer",
              "grow crystals with table salt", "use a magnet near a laptop", "heat a sealed jar"],
        syn=[("measure the pH of water", "test how acidic water is"), ("calculate the speed of sound", "work out the speed of sound"),
             ("separate salt from water", "get the salt out of salt water"), ("see the rings of Saturn", "observe Saturn's rings")],
        opp=[("increase the reaction rate", "decrease the reaction rate"), ("raise the boiling point of water", "lower the boiling point of water"),
             ("speed up evaporation", "slow down evaporation"), ("strengthen an electromagnet", "weaken an electromagnet")],
        ww=[("see Jupiter's moons", "a telescope"), ("make a simple battery", "a lemon"), ("purify water", "a filter")]),
    "history": dict(
        acts=["research my family tree online", "date an old photograph", "cite a primary source in an essay",
              "restore an old letter", "learn to read old handwriting", "search old newspaper archives",
              "visit Pompeii in summer", "donate a family heirloom to a museum"],
        syn=[("trace my ancestry", "research my genealogy"), ("find out when my house was built", "discover the year my house was built"),
             ("identify an old war medal", "figure out what an old war medal is"), ("look up old census records", "search historical census records")],
        opp=[("brighten a faded photograph", "darken a faded photograph"), ("strengthen my thesis argument", "weaken my thesis argument"),
             ("increase the value of an antique", "reduce the value of an antique")],
        ww=[("research my ancestors", "a paid subscription"), ("visit the Colosseum", "a guide"), ("read old deeds", "a magnifier")]),
    "geography": dict(
        acts=["read a topographic map", "cross a desert by car", "visit Iceland in January", "drink from mountain streams",
              "find true north with a watch", "swim in a glacial lake", "camp above the tree line", "navigate by the stars"],
        syn=[("find my latitude", "figure out my latitude"), ("locate the equator on a map", "find where the equator is on a map"),
             ("read contour lines", "interpret contour lines"), ("measure distance on a map", "work out distances on a map")],
        opp=[("zoom in on the map", "zoom out on the map"), ("increase the map scale", "decrease the map scale"),
             ("raise my camp elevation", "lower my camp elevation")],
        ww=[("navigate in the wilderness", "a compass"), ("hike a glacier", "crampons"), ("cross the border", "a visa")]),
    "home_repair": dict(
        acts=["paint over wallpaper", "replace a light switch myself", "use drywall screws for decking", "caulk around a bathtub",
              "unclog a drain with baking soda", "patch a hole in drywall", "reset a tripped breaker", "seal a concrete floor"],
        syn=[("fix a leaky faucet", "repair a dripping tap"), ("get rid of mold on the ceiling", "remove ceiling mold"),
             ("stop a door from squeaking", "fix a squeaky door"), ("hang a heavy mirror", "mount a heavy mirror on the wall")],
        opp=[("increase the water pressure", "reduce the water pressure"), ("tighten a loose hinge", "loosen a tight hinge"),
             ("raise the thermostat", "lower the thermostat"), ("widen a door frame", "narrow a door frame")],
        ww=[("drill into tile", "a special bit"), ("paint a room", "primer"), ("fix a running toilet", "a plumber")]),
    "parenting": dict(
        acts=["let a toddler nap after 4pm", "give a baby water", "put a newborn to sleep on her side",
              "let my kid walk to school alone", "use a screen timer for my kids", "start potty training at 18 months",
              "pay kids for chores", "co-sleep with an infant"],
        syn=[("get a toddler to eat vegetables", "encourage my toddler to eat veggies"), ("calm a baby who cries at night", "soothe a baby that cries at night"),
             ("wean a baby off the bottle", "transition my baby away from the bottle"), ("handle toddler tantrums", "deal with a toddler's tantrums")],
        opp=[("increase my kid's allowance", "reduce my kid's allowance"), ("push bedtime later", "move bedtime earlier"),
             ("allow my teen to use social media", "block my teen from using social media"), ("add more screen time", "cut back screen time")],
        ww=[("soothe a teething baby", "medicine"), ("travel with a toddler", "a car seat"), ("bathe a newborn", "soap")]),
    "fitness": dict(
        acts=["work out every day", "do cardio on an empty stomach", "lift weights with sore muscles", "take creatine during a cut",
              "stretch after lifting", "run with a cold", "do planks every morning", "skip rest days"],
        syn=[("lose belly fat", "reduce fat around my stomach"), ("build muscle fast", "gain muscle quickly"),
             ("improve my posture", "fix my posture"), ("increase my bench press", "lift more on the bench press")],
        opp=[("increase my protein intake", "decrease my protein intake"), ("add more sets to my workout", "cut sets from my workout"),
             ("lengthen my rest periods", "shorten my rest periods"), ("raise the treadmill incline", "lower the treadmill incline")],
        ww=[("build muscle", "supplements"), ("do squats", "a rack"), ("lose weight", "a diet plan")]),
    "gaming": dict(
        acts=["overclock my graphics card", "mod an online game", "buy a used console", "stream games on a laptop",
              "clean a controller with alcohol", "leave a console on overnight", "share a game library with a friend",
              "play ranked matches on hotel wifi"],
        syn=[("reduce input lag", "lower input delay"), ("get more FPS", "increase my frame rate"),
             ("transfer saves to a new console", "move my save files to a new console"), ("reset my controller", "restore my controller to factory settings")],
        opp=[("enable vsync", "disable vsync"), ("turn on crossplay", "turn off crossplay"),
             ("increase mouse sensitivity", "decrease mouse sensitivity"), ("raise the graphics settings", "lower the graphics settings")],
        ww=[("play online", "a subscription"), ("stream on Twitch", "a capture card"), ("play split screen", "a second controller")]),
    "photography": dict(
        acts=["shoot in RAW", "clean a camera sensor myself", "use a UV filter", "shoot into the sun",
              "store lenses with the caps off", "change lenses at the beach", "shoot handheld at night", "upgrade my camera body"],
        syn=[("blur the background", "get a shallow depth of field"), ("take sharper photos", "get crisper pictures"),
             ("fix overexposed photos", "correct photos that are too bright"), ("photograph the milky way", "shoot the milky way")],
        opp=[("increase ISO", "decrease ISO"), ("open up the aperture", "close down the aperture"),
             ("speed up the shutter", "slow down the shutter"), ("turn on image stabilization", "turn off image stabilization")],
        ww=[("shoot long exposures", "a tripod"), ("take product photos", "a lightbox"), ("photograph birds", "a telephoto lens")]),
    "law": dict(
        acts=["break a lease early", "record a phone call", "sue a contractor in small claims court", "write my own will",
              "refuse a breathalyzer test", "represent myself in court", "sublet my apartment", "fire an employee on medical leave"],
        syn=[("get a restraining order", "obtain a protective order"), ("contest a parking ticket", "dispute a parking fine"),
             ("change my legal name", "change my name legally"), ("file for divorce", "start divorce proceedings")],
        opp=[("extend a lease", "shorten a lease"), ("add someone to a deed", "remove someone from a deed"),
             ("grant power of attorney", "revoke power of attorney"), ("increase child support", "reduce child support")],
        ww=[("get divorced", "a lawyer"), ("make a will", "a notary"), ("evict a tenant", "a court order")]),
    "shopping": dict(
        acts=["return an item after 30 days", "buy a refurbished laptop", "use two coupons on one order", "price match an online deal",
              "buy electronics on Black Friday", "pay with a gift card online", "order groceries for delivery", "track a package from overseas"],
        syn=[("find the cheapest laptop", "find the least expensive laptop"), ("get a refund", "get my money back"),
             ("exchange a sweater for a larger size", "swap a sweater for a bigger size"), ("buy in bulk", "purchase in large quantities")],
        opp=[("add an item to my cart", "remove an item from my cart"), ("upgrade shipping to express", "downgrade shipping to standard"),
             ("increase the order quantity", "decrease the order quantity"), ("subscribe to the newsletter", "unsubscribe from the newsletter")],
        ww=[("check out", "an account"), ("return a gift", "a receipt"), ("shop online", "a credit card")]),
    "travel": dict(
        acts=["book flights on a Tuesday", "carry a power bank in checked luggage", "travel with an expired passport",
              "drink tap water in Lisbon", "exchange currency at the airport", "rent a car abroad", "check in online",
              "bring snacks through airport security"],
        syn=[("find cheap flights", "find inexpensive plane tickets"), ("get upgraded to business class", "get bumped up to business class"),
             ("avoid jet lag", "prevent jet lag"), ("get a visa on arrival", "obtain a visa when I land")],
        opp=[("extend my hotel stay", "shorten my hotel stay"), ("upgrade my seat", "downgrade my seat"),
             ("add a checked bag", "remove a checked bag"), ("move my flight earlier", "push my flight later")],
        ww=[("travel to Canada", "a passport"), ("rent a car", "a credit card"), ("board a flight", "a printed boarding pass")]),
    "banking": dict(
        acts=["close a savings account", "deposit a check with my phone", "lend money to a friend", "open an account online",
              "overdraw my checking account", "set up automatic transfers", "withdraw cash abroad", "freeze my debit card"],
        syn=[("check my balance", "see how much money is in my account"), ("order new checks", "get a new checkbook"),
             ("report a lost card", "tell the bank my card is lost"), ("dispute a charge", "challenge a transaction")],
        opp=[("increase my credit limit", "lower my credit limit"), ("enable overdraft protection", "disable overdraft protection"),
             ("add a joint account holder", "remove a joint account holder"), ("turn on paperless statements", "turn off paperless statements")],
        ww=[("open a bank account", "an ID"), ("send a wire transfer", "a SWIFT code"), ("withdraw cash", "my card")]),
    "insurance": dict(
        acts=["file a claim for hail damage", "cancel my policy mid-term", "add a teen driver to my policy", "switch insurers before renewal",
              "claim for a cracked phone screen", "insure a borrowed car", "buy travel insurance after booking", "bundle home and auto insurance"],
        syn=[("lower my car insurance premium", "reduce what I pay for car insurance"), ("get a quote for renters insurance", "get a price for renter's insurance"),
             ("make a claim", "file a claim"), ("cancel my policy", "end my insurance policy")],
        opp=[("raise my deductible", "lower my deductible"), ("increase my coverage", "reduce my coverage"),
             ("add flood coverage", "remove flood coverage"), ("extend my policy term", "shorten my policy term")],
        ww=[("file a claim", "a police report"), ("get life insurance", "a medical exam"), ("rent a car", "extra insurance")]),
    "telecom": dict(
        acts=["port my number to a new carrier", "unlock my phone", "use my phone abroad", "switch to an eSIM",
              "cancel my contract early", "share data with family members", "use wifi calling", "keep my old number"],
        syn=[("check my data usage", "see how much data I've used"), ("turn on roaming", "enable roaming"),
             ("change my plan", "switch to a different plan"), ("get a replacement SIM", "get a new SIM card")],
        opp=[("upgrade my plan", "downgrade my plan"), ("enable call forwarding", "disable call forwarding"),
             ("add a line", "remove a line"), ("increase my data cap", "decrease my data cap")],
        ww=[("make calls", "a SIM card"), ("use the internet abroad", "roaming"), ("set up home internet", "a technician")]),
    "hr": dict(
        acts=["take unpaid leave", "ask for a raise after six months", "work from home on Fridays", "carry over vacation days",
              "report my manager to HR", "negotiate a job offer", "take a second job", "resign by email"],
        syn=[("request time off", "ask for time off"), ("update my bank details for payroll", "change the account my salary goes to"),
             ("file an expense report", "submit an expense claim"), ("get a copy of my payslip", "get my pay stub")],
        opp=[("increase my 401k contribution", "decrease my 401k contribution"), ("extend my notice period", "shorten my notice period"),
             ("add a dependent to my benefits", "remove a dependent from my benefits"), ("opt in to the pension plan", "opt out of the pension plan")],
        ww=[("resign", "notice"), ("take sick leave", "a doctor's note"), ("change teams", "my manager's approval")]),
    "it_support": dict(
        acts=["reset my work laptop", "install software on a company laptop", "connect to the office wifi",
              "use a personal USB drive at work", "forward work email to my personal account", "share my screen in a meeting",
              "clear my browser cache", "update the printer driver"],
        syn=[("reset my password", "change my forgotten password"), ("connect to the VPN", "log into the VPN"),
             ("free up disk space", "clear space on my hard drive"), ("set up two-factor authentication", "enable 2FA")],
        opp=[("enable auto-updates", "disable auto-updates"), ("turn on the firewall", "turn off the firewall"),
             ("allow pop-ups in Chrome", "block pop-ups in Chrome"), ("increase the screen timeout", "decrease the screen timeout")],
        ww=[("join a meeting", "the app"), ("print from my phone", "a cable"), ("log in", "my authenticator app")]),
    "education": dict(
        acts=["retake an exam", "drop a class after the deadline", "transfer credits to another college", "take a gap year",
              "cite Wikipedia in a paper", "study the night before an exam", "appeal a grade", "switch majors in my third year"],
        syn=[("apply for a scholarship", "submit a scholarship application"), ("get a transcript", "request my academic record"),
             ("improve my GPA", "raise my grade point average"), ("prepare for the SAT", "study for the SAT")],
        opp=[("increase my course load", "reduce my course load"), ("add a minor", "drop a minor"),
             ("enroll in a course", "withdraw from a course")],
        ww=[("graduate", "a thesis"), ("apply to college", "test scores"), ("learn calculus", "a tutor")]),
    "health_admin": dict(
        acts=["get a referral to a specialist", "request my medical records", "change my primary care doctor", "refill a prescription early",
              "book a telehealth appointment", "cancel a doctor's appointment", "get a flu shot at a pharmacy", "use my HSA for glasses"],
        syn=[("make a doctor's appointment", "book an appointment with my doctor"), ("get a copy of my test results", "obtain my lab results"),
             ("renew a prescription", "get my prescription renewed"), ("find an in-network dentist", "locate a dentist covered by my plan")],
        opp=[("increase my dosage", "decrease my dosage"), ("add my baby to my health plan", "remove my child from my health plan"),
             ("opt in to the patient portal", "opt out of the patient portal"), ("move my appointment earlier", "move my appointment later")],
        ww=[("see a specialist", "a referral"), ("get a prescription", "an appointment"), ("visit urgent care", "insurance")]),
    "real_estate": dict(
        acts=["buy a house before selling mine", "waive the home inspection", "make an offer over asking", "rent out my basement",
              "refinance my mortgage", "back out of a purchase contract", "pay off my mortgage early", "buy a fixer-upper"],
        syn=[("find out what my house is worth", "get my home valued"), ("lower my property taxes", "reduce my property tax bill"),
             ("get pre-approved for a mortgage", "get a mortgage pre-approval"), ("list my house for sale", "put my house on the market")],
        opp=[("raise the asking price", "lower the asking price"), ("extend the closing date", "move up the closing date"),
             ("add a co-signer", "remove a co-signer"), ("increase my down payment", "decrease my down payment")],
        ww=[("buy a house", "a realtor"), ("sell a house", "staging"), ("get a mortgage", "a down payment")]),
    "taxes": dict(
        acts=["file my taxes late", "deduct my home office", "claim my parents as dependents", "amend a tax return",
              "pay estimated taxes quarterly", "file taxes for free", "report crypto gains", "request a filing extension"],
        syn=[("track my refund", "check the status of my tax refund"), ("lower my tax bill", "reduce how much tax I owe"),
             ("get a copy of last year's return", "get my previous tax return"), ("fill out a W-4", "complete a W-4 form")],
        opp=[("increase my withholding", "decrease my withholding"), ("add a dependent to my return", "remove a dependent from my return")],
        ww=[("file taxes", "an accountant"), ("amend a return", "the original paperwork"), ("file online", "tax software")]),
    "smart_home": dict(
        acts=["connect a smart plug to 5GHz wifi", "set a thermostat schedule", "put a smart speaker in the bathroom",
              "run two voice assistants together", "let guests control the lights", "automate the porch light at sunset",
              "reset a smart lock", "use a doorbell camera in an apartment"],
        syn=[("turn on the lights with my voice", "switch on the lights by voice"), ("pair a new bulb", "add a new bulb to the app"),
             ("rename a device in the app", "change a device's name in the app"), ("mute the speaker", "silence the speaker")],
        opp=[("enable motion alerts", "disable motion alerts"), ("brighten the lights", "dim the lights"),
             ("allow guest access", "block guest access"), ("raise the heating setpoint", "lower the heating setpoint")],
        ww=[("control the lights", "a hub"), ("use the camera", "a subscription"), ("run automations", "internet")]),
    "crafts": dict(
        acts=["wash a wool sweater in the machine", "block a knitted scarf", "sew denim with a ballpoint needle", "iron polyester",
              "dye cotton with coffee", "use acrylic paint on fabric", "knit with two strands at once", "finish a seam by hand"],
        syn=[("fix a dropped stitch", "repair a dropped stitch"), ("sew a button back on", "reattach a button"),
             ("unshrink a sweater", "restore a shrunken sweater"), ("thread a needle", "get thread through a needle")],
        opp=[("lengthen a skirt", "shorten a skirt"), ("tighten my knitting tension", "loosen my knitting tension"),
             ("increase stitches", "decrease stitches"), ("lighten fabric dye", "darken fabric dye")],
        ww=[("sew a hem", "a sewing machine"), ("knit a hat", "circular needles"), ("paint fabric", "a fabric medium")]),
    "investing": dict(
        acts=["invest in index funds", "withdraw from my 401k early", "pay off debt before investing", "keep an emergency fund in cash",
              "rebalance my portfolio yearly", "buy bonds when rates are high", "sell stocks at a loss", "open a Roth IRA"],
        syn=[("save for retirement", "put money aside for retirement"), ("build an emergency fund", "set up a rainy day fund"),
             ("improve my credit score", "raise my credit rating"), ("diversify my portfolio", "spread out my investments")],
        opp=[("increase my savings rate", "decrease my savings rate"), ("buy more shares", "sell some shares"),
             ("raise my monthly contribution", "lower my monthly contribution")],
        ww=[("invest", "a financial advisor"), ("buy stocks", "a broker"), ("trade options", "margin")]),
}

# ---------------------------------------------------------------------------
# Action-group frames. Frames inside one group ask for the same answer.
# {x} = base verb phrase, {xing} = gerund phrase. polarity '-' = negated group.
# ---------------------------------------------------------------------------
GROUPS = {
    "howto": ("+", ["how do I {x}?", "what's the way to {x}?", "{x} — how?", "how can I {x}?", "what are the steps to {x}?",
                    "can you explain how to {x}?", "what's the best way to {x}?", "walk me through how to {x}",
                    "how does one {x}?", "tell me how to {x}", "how would I {x}?", "how to {x}?", "I want to {x}, how?"]),
    "avoid": ("-", ["how do I avoid {xing}?", "how can I keep from {xing}?", "what's the way to avoid {xing}?",
                    "tips for not {xing}?", "how do I make sure I don't {x}?", "help me avoid {xing}",
                    "how can I stop myself from {xing}?"]),
    "for": ("+", ["why should I {x}?", "what are the benefits of {xing}?", "give me reasons to {x}",
                  "what are the advantages of {xing}?", "convince me to {x}", "what's good about {xing}?",
                  "explain why I should {x}", "what's the case for {xing}?"]),
    "against": ("-", ["why shouldn't I {x}?", "what are the downsides of {xing}?", "give me reasons not to {x}",
                      "what are the drawbacks of {xing}?", "convince me not to {x}", "what's bad about {xing}?",
                      "explain why I shouldn't {x}", "what's the case against {xing}?"]),
    "cons_do": ("+", ["what happens if I {x}?", "what are the consequences of {xing}?", "if I {x}, what happens?",
                      "what would happen if I {x}?", "what's the effect of {xing}?", "what should I expect if I {x}?"]),
    "cons_dont": ("-", ["what happens if I don't {x}?", "what are the consequences of not {xing}?", "if I don't {x}, what happens?",
                        "what would happen if I didn't {x}?", "what's the effect of not {xing}?",
                        "what should I expect if I fail to {x}?"]),
    "safe": ("+", ["is it safe to {x}?", "can I safely {x}?", "is {xing} safe?", "is it ok safety-wise to {x}?",
                   "would it be safe for me to {x}?", "is {xing} harmless?"]),
    "unsafe": ("-", ["is it unsafe to {x}?", "is it dangerous to {x}?", "is {xing} risky?", "is it not safe to {x}?",
                     "is {xing} unsafe?", "would it be dangerous for me to {x}?", "is {xing} harmful?",
                     "isn't it unsafe to {x}?"]),
    "keep": ("+", ["should I keep {xing}?", "should I continue {xing}?", "should I carry on {xing}?",
                   "should I go on {xing}?", "is it better to keep {xing}?"]),
    "stop": ("-", ["should I stop {xing}?", "should I quit {xing}?", "should I give up {xing}?",
                   "is it better to stop {xing}?", "should I cease {xing}?"]),
    "always": ("+", ["is it ok to always {x}?", "is it fine to {x} all the time?", "is it ok if I always {x}?",
                     "is it alright to {x} every single time?"]),
    "never": ("-", ["is it ok to never {x}?", "is it fine to not ever {x}?", "is it ok if I don't ever {x}?",
                    "is it alright to never {x}?"]),
    "can": ("+", ["can I {x}?", "is it possible to {x}?", "am I able to {x}?", "is there a way to {x}?", "could I {x}?"]),
    "cant": ("-", ["why can't I {x}?", "why am I unable to {x}?", "what prevents me from {xing}?",
                   "why is it impossible for me to {x}?", "how come I can't {x}?", "I can't {x}, why not?"]),
    "must": ("+", ["do I have to {x}?", "must I {x}?", "is it mandatory to {x}?", "am I required to {x}?",
                   "do I need to {x}?", "is it compulsory to {x}?"]),
    "may": ("+", ["am I allowed to {x}?", "is it permitted to {x}?", "may I {x}?", "is it ok if I {x}?",
                  "am I permitted to {x}?"]),
    "forbidden": ("-", ["am I forbidden to {x}?", "is it prohibited to {x}?", "is {xing} not allowed?",
                        "am I banned from {xing}?", "is it against the rules to {x}?", "is {xing} disallowed?"]),
    "should": ("+", ["should I {x}?", "is it a good idea to {x}?", "would you recommend that I {x}?", "is it wise to {x}?",
                     "do you think I should {x}?", "is {xing} a good idea?"]),
    "should_avoid": ("-", ["should I avoid {xing}?", "is it better not to {x}?", "would you advise against {xing}?",
                           "is it a bad idea to {x}?", "is it wiser not to {x}?", "is {xing} a bad idea?"]),
    "told_must": ("+", ["I was told I must {x}, is that true?", "someone said I have to {x}, is that right?",
                        "is it true that I need to {x}?", "my friend says I'm required to {x}, correct?"]),
    "told_neednt": ("-", ["I was told I need not {x}, is that true?", "someone said I don't have to {x}, is that right?",
                          "is it true that I don't need to {x}?", "my friend says I'm not required to {x}, correct?"]),
    "remind_do": ("+", ["remind me to {x} tomorrow", "set a reminder for tomorrow to {x}", "tomorrow, remind me to {x}",
                        "can you remind me tomorrow to {x}?", "add a reminder: {x}, tomorrow"]),
    "remind_dont": ("-", ["remind me not to {x} tomorrow", "set a reminder for tomorrow to not {x}",
                          "tomorrow, remind me not to {x}", "can you remind me tomorrow not to {x}?",
                          "add a reminder: don't {x}, tomorrow"]),
    "todo_do": ("+", ["add '{x}' to my to-do list", "put '{x}' on my task list", "make a to-do item: {x}",
                      "create a task to {x}"]),
    "todo_dont": ("-", ["add 'don't {x}' to my to-do list", "put 'do not {x}' on my task list",
                        "make a to-do item: do not {x}", "create a task reminding me not to {x}"]),
    "help_do": ("+", ["help me {x}", "I need help to {x}", "can you help me {x}?", "assist me with {xing}"]),
    "help_stop": ("-", ["help me stop {xing}", "I need help to stop {xing}", "can you help me quit {xing}?",
                        "assist me with giving up {xing}"]),
}

# with / without frames: {x} action, {t} noun phrase
WW_GROUPS = {
    "with": ("+", ["can I {x} with {t}?", "is it possible to {x} with {t}?", "{x} with {t} — possible?",
                   "is there a way to {x} using {t}?", "could I {x} if I use {t}?"]),
    "without": ("-", ["can I {x} without {t}?", "is it possible to {x} without {t}?", "{x} without {t} — possible?",
                      "is there a way to {x} without using {t}?", "could I {x} if I don't use {t}?"]),
    "howwith": ("+", ["how do I {x} with {t}?", "what's the way to {x} using {t}?", "how can I {x} with {t}?"]),
    "howwithout": ("-", ["how do I {x} without {t}?", "what's the way to {x} without using {t}?", "how can I {x} without {t}?"]),
}

# (group1, group2, kind) pairs whose questions need different answers
CONTRASTS = [
    ("howto", "avoid", "negation"), ("for", "against", "negation"), ("cons_do", "cons_dont", "negation"),
    ("safe", "unsafe", "negation"), ("keep", "stop", "negation"), ("always", "never", "negation"),
    ("remind_do", "remind_dont", "negation"), ("todo_do", "todo_dont", "negation"), ("should", "should_avoid", "negation"),
    ("help_do", "help_stop", "negation"),
    ("can", "cant", "modality"), ("must", "may", "modality"), ("may", "forbidden", "modality"),
    ("must", "forbidden", "modality"), ("told_must", "told_neednt", "modality"), ("should", "can", "modality"),
    ("must", "should", "modality"), ("can", "must", "modality"), ("must", "told_neednt", "modality"),
]
WW_CONTRASTS = [("with", "without", "negation"), ("howwith", "howwithout", "negation")]

# Conditions that can open or close a question. Pairs: (a, b, kind) ask different things.
COND_CONTRAST = [
    ("if I'm abroad", "if I'm at home", "scope"), ("while traveling overseas", "while traveling in my own country", "scope"),
    ("during the free trial", "after the free trial ends", "comparative"), ("before the deadline", "after the deadline", "comparative"),
    ("if I'm under 18", "if I'm over 18", "comparative"), ("on weekdays", "on weekends", "scope"),
    ("on a prepaid plan", "on a contract plan", "scope"), ("for my kids", "for myself", "scope"),
    ("at night", "during the day", "scope"), ("in winter", "in summer", "scope"), ("when it's raining", "when it's sunny", "scope"),
    ("if I'm a student", "if I'm retired", "scope"), ("on my work laptop", "on my personal laptop", "scope"),
    ("within the first week", "after the first week", "comparative"), ("before 9am", "after 9am", "comparative"),
    ("in the morning", "in the evening", "scope"), ("if I'm pregnant", "if I'm not pregnant", "negation"),
    ("if I have insurance", "if I don't have insurance", "negation"), ("if the warranty has expired", "if the warranty is still valid", "opposite"),
    ("on a tight budget", "with a big budget", "opposite"), ("in a rented apartment", "in a house I own", "scope"),
    ("for a one-off event", "on a regular basis", "scope"), ("if I'm self-employed", "if I'm a salaried employee", "scope"),
    ("with a broken wrist", "with a broken ankle", "scope"), ("in a small town", "in a big city", "opposite"),
    ("if I live in Canada", "if I live in Australia", "entity"), ("if my visa expires next month", "if my visa expires next year", "number"),
    ("if I'm older than 65", "if I'm younger than 65", "comparative"), ("more than once a week", "less than once a week", "comparative"),
    ("with two kids", "with three kids", "number"),
]
# synonymous conditions (same meaning)
COND_SYN = [
    ("if I'm abroad", "if I'm overseas"), ("while traveling overseas", "when I travel abroad"),
    ("during the free trial", "while I'm on the free trial"), ("if I'm under 18", "if I'm a minor"),
    ("on weekends", "on Saturdays and Sundays"), ("at night", "after dark"), ("if I don't have insurance", "if I'm uninsured"),
    ("before the deadline", "ahead of the deadline"), ("in winter", "during the winter months"),
    ("if I'm retired", "if I'm a retiree"), ("on a tight budget", "without much money to spend"),
    ("in the morning", "first thing in the morning"), ("if I'm older than 65", "if I'm over 65"),
    ("if the warranty has expired", "if the warranty is no longer valid"), ("more than once a week", "several times a week"),
]
# (front form, back form): the same question with the condition moved
COND_FRAMES = [
    ("{c}, can I {x}?", "can I {x} {c}?"), ("{c}, how do I {x}?", "how do I {x} {c}?"),
    ("{c}, should I {x}?", "should I {x} {c}?"), ("{c}, is it safe to {x}?", "is it safe to {x} {c}?"),
    ("{c}, is it possible to {x}?", "is it possible to {x} {c}?"), ("{c}, what's the best way to {x}?", "what's the best way to {x} {c}?"),
    ("{c}, am I allowed to {x}?", "am I allowed to {x} {c}?"), ("{c} — do I have to {x}?", "do I have to {x} {c}?"),
    ("{c}, is {xing} a good idea?", "is {xing} a good idea {c}?"), ("{c}, what happens if I {x}?", "what happens if I {x} {c}?"),
    ("{c}: is it ok to {x}?", "is it ok to {x} {c}?"), ("{c}, would you recommend that I {x}?", "would you recommend that I {x} {c}?"),
]

# ---------------------------------------------------------------------------
# Slot items. Every frame of an item asks the same question for the same fills.
#   slots: name -> values (kept identical on both sides unless varied)
#   pairs: name -> [(a, b, kind)] contrasting fills (label 0)
#   vary : name -> kind; two different values from slots[name] give label 0
#   syn  : name -> [(a, b)] fills that mean the same (label 1)
# ---------------------------------------------------------------------------
def K(kind, pairs):
    return [(a, b, kind) for a, b in pairs]


PRICES = ["$100", "$250", "$500", "$800", "$1,000", "$1,500", "$2,000", "50 euros", "300 pounds"]
AMOUNTS = ["$200", "$500", "$1,000", "$2,500", "$5,000", "500 euros", "$10,000"]
AIRLINES = ["Skylark Air", "Nordwind Airways", "Azura Jet", "Pacifica Air", "Halcyon Airlines", "TransVale"]
PYLIBS = ["quillpack", "fastgrid", "tesserae", "zephyr-io", "mapletree", "corvid", "loomstack", "pebbledb"]
PEOPLE = ["Priya", "Marcus", "Elena", "Tobias", "Aiko", "Jamal", "Ingrid", "Rafael", "Noor", "Declan", "Sofia", "Kwame",
          "Hana", "Mateo", "Greta", "Olu", "Yusuf", "Camille", "Dmitri", "Leilani"]

RANGE_ITEMS = [
    dict(frames=["what are the best {gadget} {P} {price}?", "which {gadget} {P} {price} would you recommend?",
                 "good {gadget} {P} {price}?", "recommend me some {gadget} {P} {price}", "top-rated {gadget} {P} {price}?"],
         slots=dict(gadget=["laptops", "headphones", "espresso machines", "running shoes", "e-bikes", "4K monitors",
                            "robot vacuums", "tents", "office chairs", "drones", "mechanical keyboards", "air fryers"], price=PRICES),
         pairs=dict(P=K("comparative", [("under", "over"), ("below", "above"), ("for less than", "for more than"), ("up to", "above")])),
         syn=dict(P=[("under", "for less than"), ("below", "under"), ("over", "above"), ("for more than", "over"), ("under", "cheaper than")])),
    dict(frames=["can I bring a carry-on {P} {kg} on {airline}?", "is a cabin bag {P} {kg} allowed on {airline}?",
                 "{airline}: is a carry-on {P} {kg} ok?", "will {airline} let me board with a carry-on {P} {kg}?"],
         slots=dict(kg=["7 kg", "8 kg", "10 kg", "12 kg", "15 kg"], airline=AIRLINES),
         pairs=dict(P=K("comparative", [("under", "over"), ("lighter than", "heavier than"), ("of at most", "of at least")])),
         syn=dict(P=[("under", "lighter than"), ("over", "heavier than"), ("over", "weighing more than")]),
         vary=dict(airline="entity")),
    dict(frames=["is a fever {P} {temp} dangerous for {who}?", "should I worry about a temperature {P} {temp} in {who}?",
                 "for {who}, is a fever {P} {temp} dangerous?", "is it dangerous when {who} has a fever {P} {temp}?"],
         slots=dict(temp=["38C", "38.5C", "39C", "40C", "101F", "102F", "103F"],
                    who=["a toddler", "a newborn", "an adult", "a teenager", "an elderly person"]),
         pairs=dict(P=K("comparative", [("above", "below"), ("over", "under"), ("higher than", "lower than")]),
                    who=K("scope", [("a toddler", "an adult"), ("a newborn", "a teenager"), ("an adult", "an elderly person")])),
         syn=dict(P=[("above", "over"), ("higher than", "above"), ("below", "under")])),
    dict(frames=["is it ok to sleep {P} {hours} a night?", "is sleeping {P} {hours} per night healthy?",
                 "is getting {P} {hours} of sleep a night fine?", "sleeping {P} {hours} nightly — is that ok?"],
         slots=dict(hours=["5 hours", "6 hours", "7 hours", "8 hours", "9 hours", "10 hours"]),
         pairs=dict(P=K("comparative", [("less than", "more than"), ("at least", "at most"), ("fewer than", "over")])),
         syn=dict(P=[("less than", "fewer than"), ("more than", "over"), ("at least", "no less than"), ("at most", "no more than")]),
         vary=dict(hours="number")),
    dict(frames=["which phone plans give {P} {gb} of data?", "what plans include {P} {gb} of data a month?",
                 "show me plans with {P} {gb} of data", "any mobile plans offering {P} {gb} of data?"],
         slots=dict(gb=["5 GB", "10 GB", "20 GB", "50 GB", "100 GB"]),
         pairs=dict(P=K("comparative", [("at least", "at most"), ("more than", "less than"), ("up to", "over")])),
         syn=dict(P=[("at least", "a minimum of"), ("at most", "a maximum of"), ("up to", "a maximum of"), ("more than", "over")]),
         vary=dict(gb="number")),
    dict(frames=["can I cancel my {booking} {P} {when}?", "is it possible to cancel the {booking} {P} {when}?",
                 "cancelling the {booking} {P} {when} — allowed?", "am I able to cancel my {booking} {P} {when}?"],
         slots=dict(booking=["hotel reservation", "flight", "concert tickets", "car rental", "yoga class", "dinner reservation"],
                    when=["check-in", "the flight departs", "the event starts", "the start date"]),
         pairs=dict(P=K("comparative", [("before", "after"), ("prior to", "after"), ("24 hours before", "24 hours after")])),
         syn=dict(P=[("before", "prior to")]), vary=dict(booking="entity")),
    dict(frames=["can I return {item} {P} {days} of delivery?", "is returning {item} {P} {days} of delivery allowed?",
                 "will they take back {item} {P} {days} of delivery?", "{item}: can it be returned {P} {days} of delivery?"],
         slots=dict(item=["a mattress", "a pair of shoes", "a laptop", "opened headphones", "a sofa", "a used blender"],
                    days=["14 days", "30 days", "60 days", "90 days"]),
         pairs=dict(P=K("comparative", [("within", "after")])), vary=dict(days="number", item="entity")),
    dict(frames=["is the {place} closed {P} {day}?", "is it true the {place} is closed {P} {day}?", "{place} closed {P} {day}?",
                 "has the {place} been shut {P} {day}?"],
         slots=dict(place=["library", "community pool", "post office on Elm Street", "city museum", "pharmacy on 5th",
                           "gym at Brookfield"], day=["Monday", "Friday", "March 3rd", "June 10", "noon"]),
         pairs=dict(P=K("comparative", [("until", "since"), ("till", "since")])), syn=dict(P=[("until", "till")]),
         vary=dict(day="number")),
    dict(frames=["is there a train to {city} {P} {time}?", "can I catch a train to {city} {P} {time}?", "any trains to {city} {P} {time}?",
                 "do trains run to {city} {P} {time}?"],
         slots=dict(city=["Marlow Cross", "Brindlehurst", "Kestrel Bay", "Vannes", "Eastmoor", "Port Allard"],
                    time=["6am", "7:30", "noon", "5pm", "9pm", "midnight"]),
         pairs=dict(P=K("comparative", [("earlier than", "later than"), ("before", "after"), ("leaving before", "leaving after")])),
         syn=dict(P=[("earlier than", "before"), ("later than", "after")]), vary=dict(city="entity", time="number")),
    dict(frames=["can kids {P} {age} ride the {ride}?", "is the {ride} allowed for children {P} {age}?",
                 "are children {P} {age} allowed on the {ride}?", "{ride}: can kids {P} {age} go on it?"],
         slots=dict(age=["6", "8", "10", "12", "14"], ride=["Thunder Loop", "log flume", "Sky Drop", "zip line", "go-karts"]),
         pairs=dict(P=K("comparative", [("under", "over"), ("younger than", "older than"), ("below", "above")])),
         syn=dict(P=[("under", "younger than"), ("over", "older than")]), vary=dict(ride="entity", age="number")),
    dict(frames=["is there a fee for withdrawing {P} {amount} a day?", "do I pay a fee if I withdraw {P} {amount} per day?",
                 "fee for daily withdrawals {P} {amount}?", "will I be charged for taking out {P} {amount} a day?"],
         slots=dict(amount=AMOUNTS),
         pairs=dict(P=K("comparative", [("more than", "less than"), ("over", "under"), ("at least", "at most")])),
         syn=dict(P=[("more than", "over"), ("less than", "under")]), vary=dict(amount="number")),
    dict(frames=["what happens if I bake {dish} {P} {otemp}?", "if I bake {dish} {P} {otemp}, what happens?",
                 "baking {dish} {P} {otemp} — what happens?", "what's the result of baking {dish} {P} {otemp}?"],
         slots=dict(dish=["sourdough", "brownies", "a cheesecake", "chicken thighs", "meringues", "a pizza"],
                    otemp=["180C", "200C", "350F", "400F", "425F"]),
         pairs=dict(P=K("comparative", [("above", "below"), ("at more than", "at less than"), ("hotter than", "cooler than")])),
         syn=dict(P=[("above", "hotter than"), ("below", "cooler than"), ("above", "at more than")]), vary=dict(dish="entity")),
    dict(frames=["is {stock} worth buying {P} {price2} a share?", "is it smart to buy {stock} {P} {price2} per share?",
                 "{stock} {P} {price2} a share: worth buying?", "should {stock} be a buy {P} {price2} per share?"],
         slots=dict(stock=["Orvane Systems", "Tellurix", "Brightmoor Energy", "Quillon Foods", "Harrow Biotech", "Novaline"],
                    price2=["$20", "$45", "$100", "$150", "$300"]),
         pairs=dict(P=K("comparative", [("below", "above"), ("under", "over"), ("at less than", "at more than")])),
         syn=dict(P=[("below", "under"), ("above", "over")]), vary=dict(stock="entity", price2="number")),
    dict(frames=["do employees with {P} {years} of service get extra leave?", "is there extra vacation for staff with {P} {years} of service?",
                 "extra leave for {P} {years} of service — do we get it?", "with {P} {years} of service, do I get extra leave?"],
         slots=dict(years=["2 years", "3 years", "5 years", "10 years"]),
         pairs=dict(P=K("comparative", [("more than", "less than"), ("at least", "fewer than"), ("over", "under")])),
         syn=dict(P=[("more than", "over"), ("at least", "a minimum of"), ("less than", "under")]), vary=dict(years="number")),
    dict(frames=["what happens if I pay my {bill} {P} the due date?", "if I pay the {bill} {P} the due date, what happens?",
                 "paying the {bill} {P} the due date — what happens?", "what's the outcome if my {bill} is paid {P} the due date?"],
         slots=dict(bill=["credit card bill", "rent", "electricity bill", "car loan payment", "phone bill", "property tax"]),
         pairs=dict(P=K("comparative", [("before", "after"), ("on", "after"), ("a week before", "a week after"), ("on", "before")])),
         syn=dict(P=[("after", "past"), ("before", "ahead of")]), vary=dict(bill="entity")),
    dict(frames=["does the {lib} library support Python {P} {pyver}?", "is {lib} compatible with Python {P} {pyver}?",
                 "can I use {lib} on Python {P} {pyver}?", "{lib} on Python {P} {pyver} — supported?"],
         slots=dict(lib=PYLIBS, pyver=["3.7", "3.8", "3.9", "3.10", "3.11", "3.12"]),
         pairs=dict(P=K("comparative", [("older than", "newer than"), ("below", "above"), ("versions before", "versions after")])),
         syn=dict(P=[("older than", "versions before"), ("newer than", "versions after"), ("above", "newer than")]),
         vary=dict(lib="entity", pyver="number")),
    dict(frames=["is altitude sickness common {P} {alt}?", "do people get altitude sickness {P} {alt}?",
                 "altitude sickness {P} {alt}: common?", "how common is altitude sickness {P} {alt}?"],
         slots=dict(alt=["2,500 meters", "3,000 meters", "8,000 feet", "10,000 feet", "4,000 m"]),
         pairs=dict(P=K("comparative", [("above", "below"), ("over", "under"), ("higher than", "lower than")])),
         syn=dict(P=[("above", "over"), ("above", "higher than"), ("below", "under")]), vary=dict(alt="number")),
    dict(frames=["is it safe to drive {P} {speed} on a spare tire?", "can I safely drive {P} {speed} on a donut spare?",
                 "driving {P} {speed} on a spare — safe?", "on a spare tire, is it safe to go {P} {speed}?"],
         slots=dict(speed=["50 mph", "60 mph", "80 km/h", "100 km/h"]),
         pairs=dict(P=K("comparative", [("faster than", "slower than"), ("over", "under"), ("above", "below"), ("at more than", "at less than")])),
         syn=dict(P=[("faster than", "over"), ("above", "over"), ("under", "slower than")]), vary=dict(speed="number")),
    dict(frames=["does my policy cover damage {P} {amount}?", "is damage {P} {amount} covered by my policy?",
                 "will my insurance pay for damage {P} {amount}?", "damage {P} {amount} — is it covered?"],
         slots=dict(amount=AMOUNTS),
         pairs=dict(P=K("comparative", [("above", "below"), ("over", "under"), ("exceeding", "under")])),
         syn=dict(P=[("over", "exceeding"), ("above", "over"), ("under", "below")]), vary=dict(amount="number")),
    dict(frames=["can I graduate with a GPA {P} {gpa}?", "is it possible to graduate with a GPA {P} {gpa}?",
                 "graduating with a GPA {P} {gpa} — possible?", "will they let me graduate with a GPA {P} {gpa}?"],
         slots=dict(gpa=["2.0", "2.5", "3.0", "3.5"]),
         pairs=dict(P=K("comparative", [("below", "above"), ("under", "over"), ("lower than", "higher than")])),
         syn=dict(P=[("below", "under"), ("below", "lower than"), ("above", "over")]), vary=dict(gpa="number")),
    dict(frames=["can a child {P} {age} sit in the front seat?", "is it legal for kids {P} {age} to ride in the front seat?",
                 "front seat for a child {P} {age} — allowed?", "are children {P} {age} allowed in the front seat?"],
         slots=dict(age=["8", "10", "12", "13"]),
         pairs=dict(P=K("comparative", [("under", "over"), ("younger than", "older than")])),
         syn=dict(P=[("under", "younger than"), ("over", "older than")]), vary=dict(age="number")),
    dict(frames=["is storage {P} {gb2} included in the {plan} plan?", "does the {plan} plan include storage {P} {gb2}?",
                 "{plan} plan: is storage {P} {gb2} included?", "do I get storage {P} {gb2} with the {plan} plan?"],
         slots=dict(gb2=["100 GB", "200 GB", "1 TB", "2 TB"], plan=["Basic", "Family", "Pro", "Starter", "Team"]),
         pairs=dict(P=K("comparative", [("up to", "beyond"), ("up to", "over"), ("of at most", "of more than")]),
                    plan=K("scope", [("Basic", "Pro"), ("Family", "Team"), ("Starter", "Pro")])),
         syn=dict(P=[("up to", "of at most"), ("beyond", "over"), ("over", "of more than")])),
    dict(frames=["do I get a full refund if I cancel {P} {hrs} of booking?", "is there a full refund for cancelling {P} {hrs} of booking?",
                 "cancel {P} {hrs} of booking — full refund?", "will I be fully refunded if I cancel {P} {hrs} of booking?"],
         slots=dict(hrs=["24 hours", "48 hours", "2 hours", "7 days"]),
         pairs=dict(P=K("comparative", [("within", "after")])), vary=dict(hrs="number")),
    dict(frames=["which {pet} breeds stay {P} {lbs}?", "what {pet} breeds weigh {P} {lbs} fully grown?",
                 "{pet} breeds {P} {lbs} as adults?", "list {pet} breeds that stay {P} {lbs}"],
         slots=dict(pet=["dog", "cat", "rabbit"], lbs=["10 lbs", "20 lbs", "30 lbs", "50 lbs"]),
         pairs=dict(P=K("comparative", [("under", "over"), ("below", "above"), ("lighter than", "heavier than")])),
         syn=dict(P=[("under", "below"), ("over", "above"), ("under", "lighter than")]), vary=dict(pet="entity", lbs="number")),
    dict(frames=["is it worth watering the lawn when it's {P} {deg}?", "should I water the lawn if it's {P} {deg}?",
                 "lawn watering when temps are {P} {deg} — worth it?", "when it's {P} {deg}, should I water my lawn?"],
         slots=dict(deg=["5C", "10C", "30C", "50F", "90F"]),
         pairs=dict(P=K("comparative", [("above", "below"), ("warmer than", "colder than")])),
         syn=dict(P=[("above", "warmer than"), ("below", "colder than")]), vary=dict(deg="number")),
    dict(frames=["can I start my new job {P} my notice period ends?", "am I allowed to start the new job {P} my notice period ends?",
                 "starting a new job {P} my notice period ends — ok?", "is it ok to begin the new job {P} my notice period ends?"],
         slots=dict(),
         pairs=dict(P=K("comparative", [("before", "after"), ("earlier than when", "later than when")])), syn=dict(P=[("before", "prior to when")])),
]

SERVICES = ["StreamLoft", "Pagewise", "CloudNest", "FitPulse", "Melodia", "Boxwell meal kit", "Quikread", "Glimmer TV"]

SCOPE_ITEMS = [
    dict(frames=["how do I cancel {S} {service} subscription?", "what's the way to cancel {S} {service} subscription?",
                 "{S} {service} subscription: how do I cancel it?", "how can I end {S} {service} subscription?"],
         slots=dict(service=SERVICES),
         pairs=dict(S=K("scope", [("my", "my wife's"), ("my", "our company's"), ("my", "my son's"), ("my personal", "my work"),
                                  ("my", "my mom's"), ("my", "my roommate's"), ("my husband's", "my daughter's")])),
         syn=dict(S=[("our company's", "our business's"), ("my mom's", "my mother's"), ("my", "my own")]), vary=dict(service="entity")),
    dict(frames=["can I get a refund for {S} order?", "is {S} order eligible for a refund?", "{S} order — can it be refunded?",
                 "am I able to get my money back for {S} order?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("this", "my last"), ("my current", "my previous"), ("today's", "yesterday's"),
                                  ("this month's", "last month's"), ("my first", "my latest"), ("my", "my sister's")])),
         syn=dict(S=[("my last", "my most recent")])),
    dict(frames=["how do I delete {S}?", "what's the way to remove {S}?", "{S}: how do I delete?", "how can I erase {S}?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("one message", "all messages"), ("a single photo", "all my photos"), ("one contact", "every contact"),
                                  ("this email", "all emails from this sender"), ("the last row", "every row"),
                                  ("one playlist", "all my playlists"), ("a single file", "the whole folder")])),
         syn=dict(S=[("all messages", "every message"), ("all my photos", "every one of my photos"), ("a single photo", "one photo"),
                     ("every contact", "all contacts"), ("a single file", "one file")])),
    dict(frames=["what's the right dose of {med} for {S}?", "how much {med} is safe for {S}?", "{med} dosage for {S}?",
                 "what dose of {med} is recommended for {S}?"],
         slots=dict(med=["ibuprofen", "acetaminophen", "allergy syrup", "melatonin", "vitamin D", "cough syrup"]),
         pairs=dict(S=K("scope", [("an adult", "a child"), ("a teenager", "a toddler"), ("a 5-year-old", "a 12-year-old"),
                                  ("a pregnant woman", "a man"), ("a child", "an infant")])),
         syn=dict(S=[("an adult", "a grown-up"), ("a child", "a kid"), ("a toddler", "a 2-year-old")]), vary=dict(med="entity")),
    dict(frames=["how much does it cost to ship a {parcel} {S}?", "what's the price of shipping a {parcel} {S}?",
                 "{parcel} shipping {S} — how much?", "cost to send a {parcel} {S}?"],
         slots=dict(parcel=["small box", "5 kg parcel", "letter", "laptop", "bike", "guitar"]),
         pairs=dict(S=K("scope", [("domestically", "internationally"), ("within the country", "abroad"), ("to Canada", "to Mexico"),
                                  ("overnight", "by ground"), ("by sea", "by air")])),
         syn=dict(S=[("domestically", "within the country"), ("internationally", "abroad")]), vary=dict(parcel="entity")),
    dict(frames=["should my spouse and I file taxes {S}?", "is it better for us to file taxes {S}?",
                 "as a married couple, should we file {S}?", "would filing {S} save my spouse and me money?"],
         slots=dict(), pairs=dict(S=K("scope", [("jointly", "separately")])),
         syn=dict(S=[("jointly", "together"), ("separately", "individually")])),
    dict(frames=["does the {S} plan include {feature}?", "is {feature} part of the {S} plan?", "{S} plan: is {feature} included?",
                 "do I get {feature} on the {S} plan?"],
         slots=dict(feature=["offline downloads", "priority support", "4K streaming", "a custom domain", "unlimited storage",
                             "ad-free listening", "screen sharing", "roaming data"]),
         pairs=dict(S=K("scope", [("Basic", "Premium"), ("Free", "Pro"), ("Family", "Individual"), ("Starter", "Business"),
                                  ("monthly", "annual"), ("student", "standard")])),
         vary=dict(feature="entity")),
    dict(frames=["where can I see the statement for {S} account?", "where do I find {S} account statement?",
                 "{S} account statement — where is it?", "how do I view the statement of {S} account?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("my checking", "my savings"), ("my personal", "my business"), ("my", "my daughter's"),
                                  ("the joint", "my individual"), ("my credit card", "my debit")])),
         syn=dict(S=[("my checking", "my current")])),
    dict(frames=["how do I mute {S} in the group chat?", "what's the way to silence {S} in the group chat?",
                 "mute {S} in the group chat — how?", "how can I stop notifications from {S} in the group chat?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("one person", "everyone"), ("a single member", "all members"), ("just Dana", "the whole group"),
                                  ("Dana", "Lukas")])),
         syn=dict(S=[("everyone", "all members"), ("one person", "a single member"), ("the whole group", "everyone")])),
    dict(frames=["show me {S} electricity bill", "pull up {S} electricity bill", "can I see {S} electricity bill?",
                 "I'd like to look at {S} electricity bill"],
         slots=dict(),
         pairs=dict(S=K("scope", [("this month's", "last month's"), ("this year's", "last year's"), ("January's", "February's"),
                                  ("the upstairs unit's", "the downstairs unit's")])),
         syn=dict(S=[("last month's", "the previous month's"), ("this month's", "the current month's")])),
    dict(frames=["how much is a {S} ticket to the {venue}?", "what does a {S} ticket for the {venue} cost?", "{venue} {S} ticket price?",
                 "price of a {S} ticket at the {venue}?"],
         slots=dict(venue=["Harborview Aquarium", "Clifftop Zoo", "Museum of Light", "Greenway Botanical Garden", "Starlight Planetarium"]),
         pairs=dict(S=K("scope", [("adult", "child"), ("student", "senior"), ("single", "family"), ("one-day", "weekly")])),
         vary=dict(venue="entity")),
    dict(frames=["do I need a passport for a {S} flight?", "is a passport required on a {S} flight?", "{S} flight — passport needed?",
                 "will I have to show a passport for a {S} flight?"],
         slots=dict(), pairs=dict(S=K("scope", [("domestic", "international"), ("short domestic", "transatlantic")])),
         syn=dict(S=[("domestic", "internal")])),
    dict(frames=["can I access {S} medical records?", "am I allowed to see {S} medical records?",
                 "is it possible for me to view {S} medical records?", "do I have the right to look at {S} medical records?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("my", "my husband's"), ("my", "my late father's"), ("my", "my adult son's"), ("my own", "my patient's")])),
         syn=dict(S=[("my late father's", "my deceased father's"), ("my", "my own")])),
    dict(frames=["does {S} insurance cover {event}?", "is {event} covered by {S} insurance?", "will {S} insurance pay for {event}?",
                 "{event}: does {S} insurance cover it?"],
         slots=dict(event=["water damage", "a stolen bike", "a cracked windshield", "emergency surgery", "a cancelled trip", "a lost phone"]),
         pairs=dict(S=K("scope", [("my home", "my renters"), ("my car", "my travel"), ("my health", "my dental"),
                                  ("our company's", "my personal")])),
         syn=dict(S=[("my car", "my auto")]), vary=dict(event="entity")),
    dict(frames=["how many vacation days do {S} get?", "what's the vacation allowance for {S}?", "{S}: how many days of vacation?",
                 "how much paid vacation is given to {S}?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("full-time employees", "part-time employees"), ("new hires", "senior staff"),
                                  ("contractors", "employees"), ("managers", "interns")])),
         syn=dict(S=[("new hires", "new employees"), ("full-time employees", "full-time staff")])),
    dict(frames=["how do I reset {S} password?", "what's the way to reset {S} password?", "{S} password reset — how?",
                 "how can I get {S} password reset?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("my", "my coworker's"), ("my email", "my VPN"), ("the admin", "my user"), ("my work", "my personal")])),
         syn=dict(S=[("my work", "my office")])),
    dict(frames=["what's the tuition for {S} students at {school}?", "how much do {S} students pay in tuition at {school}?",
                 "{school} tuition for {S} students?", "tuition at {school} for {S} students — how much?"],
         slots=dict(school=["Northfield University", "Lakeside College", "Averly Institute", "Crestmont State"]),
         pairs=dict(S=K("scope", [("in-state", "out-of-state"), ("domestic", "international"), ("undergraduate", "graduate"),
                                  ("full-time", "part-time")])),
         syn=dict(S=[("international", "foreign")]), vary=dict(school="entity")),
    dict(frames=["does my plan cover calls {S}?", "are calls {S} included in my plan?", "calls {S} — covered by my plan?",
                 "is calling {S} part of my plan?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("within the country", "abroad"), ("to landlines", "to mobiles"), ("to Mexico", "from Mexico"),
                                  ("on weekdays", "on weekends")])),
         syn=dict(S=[("abroad", "overseas")])),
    dict(frames=["can I add {S} to my phone plan?", "is it possible to add {S} to my phone plan?", "adding {S} to my phone plan — can I?",
                 "am I able to put {S} on my phone plan?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("my wife", "my mother-in-law"), ("my son", "my neighbor"), ("a tablet", "a second phone"),
                                  ("one line", "three lines")]))),
    dict(frames=["what's the best diet for {S} {pet}?", "what should I feed {S} {pet}?", "{S} {pet}: what's the best food?",
                 "which food is best for {S} {pet}?"],
         slots=dict(pet=["dog", "cat", "rabbit", "parrot"]),
         pairs=dict(S=K("scope", [("a senior", "a young"), ("an overweight", "an underweight"), ("a pregnant", "a neutered"),
                                  ("an indoor", "an outdoor")])),
         syn=dict(S=[("a senior", "an elderly"), ("an overweight", "a chubby")]), vary=dict(pet="entity")),
    dict(frames=["can I update {S} remotely?", "is it possible to update {S} remotely?", "{S}: can it be updated remotely?",
                 "is there a way to update {S} remotely?"],
         slots=dict(),
         pairs=dict(S=K("scope", [("one laptop", "every laptop in the office"), ("the app on my phone", "the app on my tablet"),
                                  ("a single router", "all our routers"), ("my thermostat", "all the thermostats in the building")])),
         syn=dict(S=[("every laptop in the office", "all the office laptops")])),
]

ENTITY_ITEMS = [
    dict(frames=["how long does the {E} battery last?", "what's the battery life of the {E}?", "{E} battery life — how long?",
                 "how many hours does the {E} battery last on a charge?"],
         slots=dict(E=["Voltra X2", "Nimbus 7 Pro", "Corvo S11", "Pixelite 4a", "Arden One", "Zephyr Mini", "Halo Tab 9"]), vary=dict(E="entity")),
    dict(frames=["how long should I bake {E}?", "what's the baking time for {E}?", "{E}: how long in the oven?",
                 "how many minutes does {E} need in the oven?"],
         slots=dict(E=["a lemon drizzle cake", "focaccia", "a sweet potato pie", "banana muffins", "a shepherd's pie", "cornbread",
                       "a quiche"]), vary=dict(E="entity")),
    dict(frames=["how often should I water a {E}?", "what's the watering schedule for a {E}?", "{E} — how often to water?",
                 "how frequently does a {E} need water?"],
         slots=dict(E=["fiddle leaf fig", "snake plant", "peace lily", "jade plant", "Boston fern", "string of pearls", "bird of paradise"]),
         vary=dict(E="entity")),
    dict(frames=["how do I install {E} on {os}?", "what's the way to set up {E} on {os}?", "installing {E} on {os} — steps?",
                 "walk me through installing {E} on {os}"],
         slots=dict(E=["Docker", "PostgreSQL", "Node.js", "Redis", "nginx", "the Kestrel CLI", "Granite DB"],
                    os=["Ubuntu", "Windows", "macOS", "Fedora"]), vary=dict(E="entity", os="entity")),
    dict(frames=["what tire pressure does the {E} need?", "recommended tire pressure for the {E}?", "{E}: what should the tire pressure be?",
                 "what PSI should I run on the {E}?"],
         slots=dict(E=["Tamura Breeze", "Corvane S", "Halden GT", "Orsk Valor", "Benton Ridge", "Lumen EV3"]), vary=dict(E="entity")),
    dict(frames=["how much should a {E} eat per day?", "what's the daily food amount for a {E}?", "{E} — how much food a day?",
                 "how much food does a {E} need daily?"],
         slots=dict(E=["border collie puppy", "senior Persian cat", "adult rabbit", "bearded dragon", "golden retriever", "cockatiel"]),
         vary=dict(E="entity")),
    dict(frames=["when does {E} play next?", "what's the date of {E}'s next game?", "{E} next match — when?", "when is {E}'s next fixture?"],
         slots=dict(E=["the Harbor City Hawks", "FC Vellmar", "the Ridgeback Rangers", "Northgate United", "the Copper Valley Miners",
                       "Astoria Athletic"]), vary=dict(E="entity")),
    dict(frames=["what key is {E} in?", "in which key is {E} written?", "{E} — what key?", "which key is the song {E} played in?"],
         slots=dict(E=["'Paper Lanterns'", "'Salt and Cedar'", "'The Long Drive Home'", "'Glasswing'", "'Midnight at Orrin's'",
                       "'Blue Hour Waltz'"]), vary=dict(E="entity")),
    dict(frames=["what is the melting point of {E}?", "at what temperature does {E} melt?", "{E} melting point?", "how hot does {E} have to get to melt?"],
         slots=dict(E=["iron", "copper", "aluminum", "tungsten", "lead", "gold", "tin", "zinc"]), vary=dict(E="entity")),
    dict(frames=["when did {E} end?", "in what year did {E} come to an end?", "{E} — when did it end?", "what year marked the end of {E}?"],
         slots=dict(E=["the Karst Rebellion", "the Second Orlan War", "the reign of Queen Isvelde", "the Tessarine Dynasty",
                       "the Great Salt Strike", "the Siege of Dunmerrow"]), vary=dict(E="entity")),
    dict(frames=["what is the capital of {E}?", "which city is the capital of {E}?", "{E}'s capital?", "what city serves as {E}'s capital?"],
         slots=dict(E=["Australia", "Canada", "Kazakhstan", "Nigeria", "Brazil", "Turkey", "New Zealand", "Morocco", "Vietnam", "Peru"]),
         vary=dict(E="entity")),
    dict(frames=["what size drill bit do I need for a {E}?", "which drill bit size fits a {E}?", "{E} — what drill bit size?",
                 "what bit should I drill with for a {E}?"],
         slots=dict(E=["#8 wood screw", "1/4 inch wall anchor", "M6 bolt", "10 mm plastic plug", "3/8 inch lag bolt"]), vary=dict(E="entity")),
    dict(frames=["how do I turn on dark mode in {E}?", "where's the dark mode setting in {E}?", "{E} dark mode — how to enable?",
                 "how can I enable dark mode in {E}?"],
         slots=dict(E=["Pagewise", "Tallyho Notes", "the Bramble email app", "Kitewire", "OrbitChat", "LedgerLeaf"]), vary=dict(E="entity")),
    dict(frames=["do I need a visa to visit {E} {nat}?", "{nat}, is a visa required for {E}?", "is a visa needed for {E} {nat}?",
                 "{nat}, do I have to get a visa for {E}?"],
         slots=dict(E=["Japan", "Brazil", "Vietnam", "Kenya", "Turkey", "India", "Chile"]),
         pairs=dict(nat=K("scope", [("as a US citizen", "with a UK passport"), ("as a Canadian", "with an Australian passport"),
                                    ("as a US citizen", "as a Mexican citizen")])),
         syn=dict(nat=[("as a US citizen", "with an American passport"), ("as a Canadian", "with a Canadian passport")]),
         vary=dict(E="entity")),
    dict(frames=["what are the opening hours of {E}?", "when is {E} open?", "{E} opening times?", "what time does {E} open and close?"],
         slots=dict(E=["Maple & Finch Bakery", "the Ostwick public library", "Glenbrook Mall", "the Harrow Street clinic",
                       "Crescent Hardware", "the Tidewater farmers market"]), vary=dict(E="entity")),
    dict(frames=["who founded {E}?", "who started the company {E}?", "{E} — who was the founder?", "which person founded {E}?"],
         slots=dict(E=["Orvane Systems", "Tellurix", "Brightmoor Energy", "Quillon Foods", "Harrow Biotech", "Pinecrest Group"]),
         vary=dict(E="entity")),
    dict(frames=["what does {E} cover in the {course} course?", "which topics are in {E} of the {course} course?",
                 "{course} course, {E}: what's covered?", "what's taught in {E} of the {course} course?"],
         slots=dict(E=["module 1", "module 3", "week 4", "unit 6", "the final unit"],
                    course=["Intro to Statistics", "Organic Chemistry", "Modern European History", "Data Structures"]),
         vary=dict(E="entity", course="entity")),
    dict(frames=["how do I get to {E} by public transport?", "what's the public transport route to {E}?",
                 "getting to {E} on public transport — how?", "which bus or train goes to {E}?"],
         slots=dict(E=["Brindlehurst station", "the Kestrel Bay ferry terminal", "Eastmoor Hospital", "the Port Allard stadium",
                       "Marlow Cross airport"]), vary=dict(E="entity")),
    dict(frames=["what's the warranty on the {E}?", "how long is the {E} under warranty?", "{E} warranty length?",
                 "how many years of warranty does the {E} come with?"],
         slots=dict(E=["Brisa 500 dishwasher", "Kelvane fridge", "Tornado T3 vacuum", "Orbis washing machine", "Cinder pellet grill"]),
         vary=dict(E="entity")),
    dict(frames=["who wrote {E}?", "who is the author of {E}?", "{E} — who's the author?", "which writer wrote {E}?"],
         slots=dict(E=["'The Lantern Keeper'", "'A Map of Quiet Rivers'", "'Northbound'", "'The Glass Orchard'", "'Ember and Ash'"]),
         vary=dict(E="entity")),
    dict(frames=["is {E} good for beginners?", "would you recommend {E} to a beginner?", "{E} for a beginner — good choice?",
                 "is {E} beginner-friendly?"],
         slots=dict(E=["the Orra Z camera", "the Kessler trail bike", "rock climbing", "Krav Maga", "the Yamura keyboard",
                       "sourdough baking", "Rust", "bonsai"]), vary=dict(E="entity")),
    dict(frames=["what's the exchange policy at {E}?", "how does exchanging items work at {E}?", "{E} exchange policy?",
                 "can you explain {E}'s exchange policy?"],
         slots=dict(E=["Bramblewood Outfitters", "Nordal Home", "Sunny Pixel Electronics", "Tallgrass Books", "Vireo Sports"]),
         vary=dict(E="entity")),
]

NUMBER_ITEMS = [
    dict(frames=["what's {N} Fahrenheit in Celsius?", "convert {N} degrees Fahrenheit to Celsius", "{N} degrees F in Celsius?",
                 "how much is {N} Fahrenheit in Celsius?"],
         slots=dict(N=["325", "350", "375", "400", "425", "98.6", "212", "0"]), vary=dict(N="number")),
    dict(frames=["is a {N} raise good?", "would a {N} raise be considered good?", "is getting a {N} raise decent?", "{N} raise — is that good?"],
         slots=dict(N=["2%", "3%", "5%", "7%", "10%", "15%"]), vary=dict(N="number")),
    dict(frames=["how much is {N} euros in dollars?", "convert {N} euros to US dollars", "{N} EUR in USD?", "what are {N} euros worth in dollars?"],
         slots=dict(N=["50", "100", "250", "1,000", "20", "75"]), vary=dict(N="number")),
    dict(frames=["what's a good gift for a {N}-year-old?", "gift ideas for a {N}-year-old?", "what should I buy a {N}-year-old as a present?",
                 "present ideas for a {N} year old?"],
         slots=dict(N=["3", "5", "7", "10", "13", "16"]), vary=dict(N="number"), syn=dict(N=[("7", "seven"), ("10", "ten")])),
    dict(frames=["how many calories do I burn walking {N}?", "calories burned walking {N}?", "if I walk {N}, how many calories do I burn?",
                 "walking {N} burns how many calories?"],
         slots=dict(N=["1 mile", "2 miles", "5 km", "10,000 steps", "3 miles"]), vary=dict(N="number"),
         syn=dict(N=[("1 mile", "one mile"), ("2 miles", "two miles"), ("10,000 steps", "10k steps")])),
    dict(frames=["how long do I roast a {N} turkey?", "roasting time for a {N} turkey?", "a {N} turkey — how long in the oven?",
                 "how many hours should a {N} turkey roast?"],
         slots=dict(N=["10 lb", "12 lb", "15 lb", "18 lb", "20 lb"]), vary=dict(N="number"),
         syn=dict(N=[("10 lb", "10-pound"), ("12 lb", "12-pound"), ("15 lb", "15-pound")])),
    dict(frames=["is it worth buying a car with {N} on it?", "should I buy a used car with {N} on the clock?", "used car with {N} — worth it?",
                 "is a car with {N} worth buying?"],
         slots=dict(N=["50,000 miles", "100,000 miles", "150,000 miles", "200,000 km", "80,000 miles"]), vary=dict(N="number"),
         syn=dict(N=[("100,000 miles", "100k miles"), ("50,000 miles", "50k miles")])),
    dict(frames=["is the museum open on {N}?", "will the museum be open on {N}?", "museum open on {N}?", "can I visit the museum on {N}?"],
         slots=dict(N=["December 24", "December 26", "January 1", "July 4", "Easter Monday", "November 11"]), vary=dict(N="number"),
         syn=dict(N=[("January 1", "New Year's Day"), ("December 24", "Christmas Eve"), ("July 4", "the Fourth of July")])),
    dict(frames=["which terminal is gate {N} in?", "gate {N} — which terminal?", "what terminal has gate {N}?", "gate {N} is in which terminal?"],
         slots=dict(N=["A12", "B7", "C22", "D3", "E15", "B17"]), vary=dict(N="number")),
    dict(frames=["can I retire at {N} with {M} saved?", "is {M} enough to retire at {N}?", "retiring at {N} with {M} in savings — feasible?",
                 "with {M} saved, can I retire at {N}?"],
         slots=dict(N=["55", "60", "62", "65"], M=["$500k", "$800k", "$1 million", "$1.5 million"]), vary=dict(N="number", M="number"),
         syn=dict(M=[("$1 million", "$1M"), ("$500k", "$500,000"), ("$800k", "$800,000")], N=[("60", "sixty")])),
    dict(frames=["how many tablespoons are in {N}?", "{N} equals how many tablespoons?", "how many tbsp is {N}?", "{N} is how many tablespoons?"],
         slots=dict(N=["a cup", "half a cup", "a quarter cup", "a third of a cup"]), vary=dict(N="number"),
         syn=dict(N=[("half a cup", "1/2 cup"), ("a quarter cup", "1/4 cup"), ("a third of a cup", "1/3 cup")])),
    dict(frames=["is {N} of screen time a day too much for a child?", "for a kid, is {N} of screens daily too much?",
                 "is {N} a day of screen time excessive for kids?", "too much screen time for a child: is {N} a day over the line?"],
         slots=dict(N=["1 hour", "2 hours", "3 hours", "30 minutes", "90 minutes"]), vary=dict(N="number"),
         syn=dict(N=[("30 minutes", "half an hour"), ("90 minutes", "an hour and a half"), ("1 hour", "one hour"), ("2 hours", "120 minutes")])),
    dict(frames=["what's the monthly payment on a {N} loan at {R}?", "monthly payment for a {N} loan with {R} interest?",
                 "if I borrow {N} at {R}, what's the monthly payment?", "{N} loan at {R} — what would I pay each month?"],
         slots=dict(N=["$10,000", "$25,000", "$200,000", "$350,000"], R=["4%", "5.5%", "6%", "7.25%"]), vary=dict(N="number", R="number"),
         syn=dict(N=[("$10,000", "$10k"), ("$25,000", "$25k")])),
    dict(frames=["is {N} a good resting heart rate?", "is a resting heart rate of {N} normal?", "resting pulse of {N} — ok?",
                 "is {N} at rest a healthy heart rate?"],
         slots=dict(N=["55 bpm", "62 bpm", "75 bpm", "90 bpm", "105 bpm"]), vary=dict(N="number")),
    dict(frames=["what major events happened in {N}?", "what happened in the year {N}?", "{N}: what were the big events?",
                 "which important events took place in {N}?"],
         slots=dict(N=["1815", "1848", "1914", "1969", "1989", "2001", "1066"]), vary=dict(N="number")),
    dict(frames=["what size TV for a {N} viewing distance?", "which TV size suits a {N} viewing distance?",
                 "{N} from the couch — what TV size?", "I sit {N} from the TV, what size should I get?"],
         slots=dict(N=["6 ft", "8 ft", "10 ft", "3 meters", "12 feet"]), vary=dict(N="number"),
         syn=dict(N=[("10 ft", "10 feet"), ("12 feet", "12 ft"), ("6 ft", "six feet")])),
    dict(frames=["how much paint do I need for {N}?", "{N} of wall — how much paint?", "paint needed to cover {N}?",
                 "how many gallons of paint for {N}?"],
         slots=dict(N=["200 square feet", "400 sq ft", "30 square meters", "600 square feet"]), vary=dict(N="number"),
         syn=dict(N=[("400 sq ft", "400 square feet"), ("200 square feet", "200 sq ft")])),
    dict(frames=["is {N} of RAM enough for video editing?", "can I edit video with {N} of RAM?", "video editing on {N} of RAM — enough?",
                 "will {N} of RAM handle video editing?"],
         slots=dict(N=["8 GB", "16 GB", "32 GB", "64 GB"]), vary=dict(N="number"), syn=dict(N=[("16 GB", "16 gigs"), ("8 GB", "8 gigs")])),
    dict(frames=["what's the penalty for paying taxes {N} late?", "penalty if my taxes are {N} late?", "if I pay my taxes {N} late, what's the penalty?",
                 "paying taxes {N} late — what penalty?"],
         slots=dict(N=["1 day", "a week", "30 days", "3 months", "a year"]), vary=dict(N="number"),
         syn=dict(N=[("a week", "7 days"), ("3 months", "three months"), ("a year", "12 months")])),
    dict(frames=["can I bring {N} guests to the pool?", "am I allowed {N} guests at the pool?", "is bringing {N} guests to the pool ok?",
                 "is it fine to bring {N} guests to the pool?"],
         slots=dict(N=["one", "two", "three", "four", "five"]), vary=dict(N="number"), syn=dict(N=[("two", "2"), ("three", "3"), ("four", "4")])),
    dict(frames=["what should a baby weigh at {N}?", "normal weight for a baby at {N}?", "how much should my baby weigh at {N}?",
                 "at {N}, what's a typical baby weight?"],
         slots=dict(N=["3 months", "6 months", "9 months", "12 months"]), vary=dict(N="number"),
         syn=dict(N=[("12 months", "1 year"), ("6 months", "six months")])),
    dict(frames=["how do I set my alarm for {N}?", "set an alarm for {N}", "wake me up at {N}", "can you set an alarm at {N}?"],
         slots=dict(N=["6:30am", "7am", "5:45am", "8:15", "noon", "11pm"]), vary=dict(N="number"),
         syn=dict(N=[("7am", "7 o'clock in the morning"), ("noon", "12pm"), ("6:30am", "half past six in the morning")])),
    dict(frames=["book a table for {N} at {rest}", "reserve a table for {N} at {rest}", "can you get me a table for {N} at {rest}?",
                 "I need a reservation for {N} at {rest}"],
         slots=dict(N=["two", "four", "six", "eight"], rest=["Casa Lumina", "the Gilded Fork", "Saffron Alley", "Nori House"]),
         vary=dict(N="number", rest="entity"), syn=dict(N=[("two", "2 people"), ("four", "4 people")])),
]

# effect items: does T <verb> O ?  ({P} base form, {P3} third person)
EFFECT_TO = [("caffeine", "sleep quality"), ("stretching", "muscle recovery"), ("overclocking", "a GPU's lifespan"),
             ("a VPN", "internet speed"), ("compost", "clay soil"), ("road salt", "a car's paint"), ("fluoride", "tooth enamel"),
             ("screen time", "a toddler's speech development"), ("a dehumidifier", "indoor air quality"), ("inflation", "bond prices"),
             ("high humidity", "guitar tone"), ("meditation", "focus"), ("a second monitor", "productivity"),
             ("fast charging", "phone battery health"), ("cold showers", "immunity"), ("interest rate cuts", "housing prices"),
             ("tummy time", "a baby's neck strength"), ("aeration", "lawn health"), ("caching", "page load time"),
             ("sunlight", "photo prints"), ("remote work", "team communication"), ("a credit freeze", "my credit score"),
             ("defragmenting", "SSD performance"), ("pruning", "fruit yield")]
EFFECT_VERBS_NEG = [("improve", "damage"), ("help", "hurt"), ("speed up", "slow down"), ("increase", "reduce"),
                    ("raise", "lower"), ("strengthen", "weaken"), ("improve", "worsen")]
EFFECT_VERBS_SYN = [("damage", "harm"), ("hurt", "harm"), ("speed up", "accelerate"), ("reduce", "lower"),
                    ("increase", "raise"), ("worsen", "degrade"), ("improve", "boost")]
EFFECT_FRAMES = ["does {T} {P} {O}?", "is it true that {T} {P3} {O}?", "{T} {P3} {O} — true?", "do experts say {T} {P3} {O}?",
                 "can you confirm whether {T} {P3} {O}?"]

# negation-preserving paraphrase items (all frames keep the same meaning)
NEGKEEP_ITEMS = [
    dict(frames=["is {E} illegal in {place}?", "is {E} not legal in {place}?", "is {E} against the law in {place}?",
                 "in {place}, is {E} unlawful?", "{E} in {place}: is it not allowed by law?"],
         slots=dict(E=["jaywalking", "flying a drone in parks", "parking overnight on the street", "owning a ferret", "setting off fireworks",
                       "collecting rainwater", "busking"], place=["Ohio", "Singapore", "Kestrel County", "Bavaria", "Ontario", "Queensland"]),
         vary=dict(E="entity", place="entity")),
    dict(frames=["why isn't my {dev} turning on?", "my {dev} won't turn on, why?", "what's wrong if my {dev} doesn't power on?",
                 "{dev} not turning on — what's the cause?", "why does my {dev} fail to turn on?"],
         slots=dict(dev=["laptop", "Voltra X2 phone", "smart speaker", "router", "electric toothbrush", "game console"]),
         vary=dict(dev="entity")),
    dict(frames=["is {E} not recommended for {who}?", "is {E} discouraged for {who}?", "do doctors advise against {E} for {who}?",
                 "is {E} inadvisable for {who}?"],
         slots=dict(E=["intermittent fasting", "hot yoga", "a keto diet", "long-haul flying", "heavy lifting"],
                    who=["pregnant women", "teenagers", "people with diabetes", "older adults"]),
         vary=dict(E="entity"), pairs=dict(who=K("scope", [("pregnant women", "teenagers"), ("people with diabetes", "older adults")]))),
    dict(frames=["is the {E} unavailable in {place}?", "is the {E} not available in {place}?", "can't I get the {E} in {place}?",
                 "is the {E} not sold in {place}?"],
         slots=dict(E=["Nimbus 7 Pro", "Glimmer TV app", "FitPulse band", "Kelvane fridge", "Melodia family plan"],
                    place=["Canada", "Germany", "India", "Brazil", "South Africa"]), vary=dict(E="entity", place="entity")),
    dict(frames=["why didn't my {thing} arrive?", "my {thing} never arrived, why?", "why hasn't my {thing} shown up?",
                 "{thing} not delivered — why?"],
         slots=dict(thing=["refund", "package", "verification email", "paycheck", "tax refund", "replacement card"]), vary=dict(thing="entity")),
    dict(frames=["is it inadvisable to {x}?", "is it not advisable to {x}?", "is it unwise to {x}?", "would it be unwise to {x}?"],
         slots=dict(), act=True),
    dict(frames=["what if I can't afford to {x}?", "what are my options if I'm unable to afford to {x}?",
                 "I can't afford to {x} — what now?", "if I don't have the money to {x}, what can I do?"], slots=dict(), act=True),
]

# ---------------------------------------------------------------------------
# Direction items: swapping {A} and {B} changes the answer (label 0).
# frames are equivalent for the same A/B; some frames place B before A on purpose
# ("replace B with A" == "use A instead of B"), tagged "r" for the reorder kind.
# pool: lists to draw two distinct values from, or pairpool: fixed ordered pairs.
# ---------------------------------------------------------------------------
ACCOUNTS = ["my savings account", "my checking account", "my PayPal", "my brokerage account", "my joint account",
            "my Kestrel Bank account", "my business account", "my travel card"]
CITIES = ["Lisbon", "Denver", "Osaka", "Dublin", "Marlow Cross", "Brindlehurst", "Kestrel Bay", "Port Allard", "Vannes",
          "Eastmoor", "Prague", "Austin", "Nairobi", "Auckland", "Montreal", "Seville"]
FORMATS = ["PDF", "Word", "JPEG", "PNG", "CSV", "Excel", "MP4", "GIF", "EPUB", "HEIC", "WAV", "MP3", "FLAC", "Markdown", "HTML"]
LANGS = ["English", "Spanish", "Japanese", "German", "Portuguese", "Korean", "Polish", "Arabic", "Dutch", "Hindi", "Turkish"]
ING = ["butter", "coconut oil", "honey", "maple syrup", "sugar", "applesauce", "Greek yogurt", "sour cream", "milk",
       "oat milk", "baking soda", "baking powder", "olive oil", "margarine"]
TEAMS = ["the Harbor City Hawks", "FC Vellmar", "the Ridgeback Rangers", "Northgate United", "the Copper Valley Miners",
         "Astoria Athletic", "the Saltmarsh Herons", "Dunmore Rovers"]
COMPANIES = ["Granwell Holdings", "Pinecrest Group", "Obsidian Ventures", "Larkspur Capital", "Meridian Foods", "Tallis & Co",
             "Orvane Systems", "Quillon Foods"]
GAMES = ["Emberline", "Crystal Warden II", "Moonhollow", "Tidebreaker", "Sky Foundry", "Ashen Reach", "Lantern Run", "Vaultborn"]

DIR_ITEMS = [
    dict(frames=["how do I transfer money from {A} to {B}?", "what's the way to move funds from {A} to {B}?",
                 "moving money from {A} to {B} — how?", "how can I send money from {A} to {B}?",
                 ("how do I move money into {B} from {A}?", "r")], pool=[ACCOUNTS]),
    dict(frames=["how long is the flight from {A} to {B}?", "flight time from {A} to {B}?", "how many hours does it take to fly from {A} to {B}?",
                 "flying {A} to {B}, how long does it take?", ("how long is the flight to {B} from {A}?", "r")], pool=[CITIES]),
    dict(frames=["cheapest way to get from {A} to {B}?", "what's the least expensive way to travel from {A} to {B}?",
                 "how do I get from {A} to {B} cheaply?", ("cheapest way to reach {B} starting from {A}?", "r")], pool=[CITIES]),
    dict(frames=["how do I convert {A} files to {B}?", "{A} to {B} conversion — how?", "how can I turn {A} files into {B} files?",
                 "what's the easiest way to convert from {A} to {B}?", ("how do I end up with {B} files starting from {A} files?", "r")], pool=[FORMATS]),
    dict(frames=["how do I convert {A} to {B}?", "{A} to {B} conversion?", "how do you go from {A} to {B}?",
                 "what's the formula to convert {A} into {B}?"],
         pool=[["cups", "grams", "ounces", "tablespoons", "milliliters", "teaspoons"], ["Celsius", "Fahrenheit", "Kelvin"],
               ["miles", "kilometers", "nautical miles"], ["pounds", "kilograms", "stone"], ["liters", "gallons", "quarts"]]),
    dict(frames=["translate this from {A} to {B}", "can you translate this {A} text into {B}?", "{A} to {B} translation, please",
                 "please turn this {A} into {B}", ("I need this in {B}; it's currently in {A}", "r")], pool=[LANGS]),
    dict(frames=["how do I migrate from {A} to {B}?", "moving from {A} to {B}: what are the steps?", "what's involved in switching from {A} to {B}?",
                 "how can I switch over from {A} to {B}?", ("I'm leaving {A} for {B}, how do I migrate?", "r")],
         pool=[["MySQL", "PostgreSQL", "SQLite", "MongoDB", "Granite DB"], ["Android", "iPhone"], ["Windows", "macOS", "Linux"],
               ["Pagewise", "Tallyho Notes", "LedgerLeaf", "Kitewire"], ["Jenkins", "GitHub Actions", "GitLab CI"]]),
    dict(frames=["can I use {A} instead of {B} in {dish}?", ("can I replace {B} with {A} in {dish}?", "r"),
                 "is {A} in place of {B} ok in {dish}?", ("will {dish} work if I swap the {B} for {A}?", "r"),
                 ("can {B} be substituted with {A} in {dish}?", "r")],
         pool=[ING], slots=dict(dish=["cookies", "banana bread", "pancakes", "brownies", "muffins", "a sponge cake"])),
    dict(frames=["how do I forward emails from {A} to {B}?", "set up forwarding from {A} to {B} — how?",
                 "how can I get mail sent to {A} to go to {B}?", ("how do I make {B} receive everything that arrives at {A}?", "r")],
         pool=[["my work address", "my personal Gmail", "my old school account", "the support inbox", "my Outlook account", "the sales alias"]]),
    dict(frames=["how do I give {A} access to {B}'s {thing}?", "how can I let {A} access {B}'s {thing}?",
                 ("what's the way to share {B}'s {thing} with {A}?", "r"), "granting {A} access to {B}'s {thing} — how?",
                 ("how do I make {B}'s {thing} visible to {A}?", "r")],
         pool=[PEOPLE], slots=dict(thing=["calendar", "inbox", "shared drive", "project folder", "bank statements", "photo library",
                                          "medical records", "password vault"])),
    dict(frames=["does the {A} have to pay the {B} for {cost}?", "is the {A} the one who pays the {B} for {cost}?",
                 "must the {A} pay the {B} for {cost}?", ("does the {B} get paid by the {A} for {cost}?", "r")],
         pairpool=[("landlord", "tenant"), ("employer", "employee"), ("buyer", "seller"), ("client", "freelancer"),
                   ("insurance company", "policyholder"), ("host", "guest"), ("franchisee", "franchisor"), ("subtenant", "main tenant"),
                   ("parent", "babysitter"), ("homeowner", "contractor")],
         slots=dict(cost=["damages", "the fees", "the extra costs", "the cleaning", "travel expenses", "the deposit", "overtime"])),
    dict(frames=["can {A} see what {B} posts?", "is {A} able to view {B}'s posts?", ("are {B}'s posts visible to {A}?", "r"),
                 "does {A} get to see {B}'s posts?"], pool=[PEOPLE]),
    dict(frames=["should {A} send {B} the contract first?", "is {A} supposed to send the contract to {B} first?",
                 ("should {B} receive the contract from {A} first?", "r"), "does {A} send {B} the contract first?"],
         pairpool=[("the buyer", "the seller"), ("the agency", "the client"), ("the tenant", "the landlord"), ("the employee", "HR"),
                   ("the freelancer", "the client"), ("the publisher", "the author")]),
    dict(frames=["is it worth trading {A} for {B}?", "should I trade {A} for {B}?", ("should I give up {A} to get {B}?", "r"),
                 "trading {A} for {B} — good deal?"],
         pool=[["a legendary sword", "a rare mount", "an epic shield", "the dragon pet", "two raid keys", "a founder's skin"]]),
    dict(frames=["how do I redirect {A} to {B}?", "how can I make {A} redirect to {B}?", ("how do I send visitors of {A} over to {B}?", "r"),
                 "set up a redirect from {A} to {B} — how?"],
         pool=[["the old blog URL", "the new blog URL", "www", "the bare domain", "http", "https", "the /shop page", "the homepage"]]),
    dict(frames=["can I copy files from {A} to {B}?", "is it possible to copy files from {A} onto {B}?", "copying files from {A} to {B} — possible?",
                 ("can {B} receive files copied from {A}?", "r")],
         pool=[["my phone", "my laptop", "an external drive", "the NAS", "my tablet", "a USB stick", "the cloud folder"]]),
    dict(frames=["how much is {N} {A} in {B}?", "convert {N} {A} to {B}", "{N} {A} to {B}?", "what is {N} {A} worth in {B}?"],
         pool=[["US dollars", "euros", "British pounds", "Japanese yen", "Swiss francs", "Canadian dollars", "Mexican pesos"]],
         slots=dict(N=["100", "50", "1,000", "250"])),
    dict(frames=["can I upgrade from {A} to {B} without losing data?", "is an upgrade from {A} to {B} possible without data loss?",
                 "going from {A} to {B} — will I lose data?", "will my data survive an upgrade from {A} to {B}?"],
         pool=[["the Free plan", "the Pro plan", "the Family plan", "the Team plan"], ["version 2", "version 3", "version 4"]]),
]

# converse items: frames say R(A,B); tag "c" = phrased with the converse relation. anti = frames saying R(B,A) with A first.
CONVERSE_ITEMS = [
    dict(frames=["did {A} beat {B} in the final?", "did {A} win against {B} in the final?", ("did {B} lose to {A} in the final?", "c"),
                 ("was {B} beaten by {A} in the final?", "c")],
         anti=["did {A} lose to {B} in the final?", "was {A} beaten by {B} in the final?"], pool=[TEAMS]),
    dict(frames=["does {A} report to {B}?", "is {A} managed by {B}?", ("is {B} {A}'s manager?", "c"), ("does {B} manage {A}?", "c")],
         anti=["is {A} {B}'s manager?", "does {A} manage {B}?"], pool=[PEOPLE]),
    dict(frames=["is {A} north of {B}?", "does {A} lie to the north of {B}?", ("is {B} south of {A}?", "c"), ("does {B} lie south of {A}?", "c")],
         anti=["is {A} south of {B}?", "does {A} lie to the south of {B}?"],
         pool=[["Lyon", "Marseille", "Lille", "Bordeaux", "Strasbourg"], ["Brindlehurst", "Eastmoor", "Marlow Cross", "Port Allard"],
               ["Denver", "Austin", "Seattle", "Phoenix", "Chicago"]]),
    dict(frames=["was {A} released before {B}?", "did {A} come out before {B}?", ("was {B} released after {A}?", "c"),
                 ("did {B} come out after {A}?", "c")], anti=["was {A} released after {B}?", "did {A} come out after {B}?"], pool=[GAMES]),
    dict(frames=["did {A} buy the land from {B}?", "did {A} purchase the land from {B}?", ("did {B} sell the land to {A}?", "c")],
         anti=["did {A} sell the land to {B}?", "did {A} sell {B} the land?"], pool=[COMPANIES]),
    dict(frames=["does {A} owe money to {B}?", "does {A} owe {B} money?", ("is {B} owed money by {A}?", "c")],
         anti=["is {A} owed money by {B}?", "does {A} have money owed to them by {B}?"], pool=[PEOPLE]),
    dict(frames=["is {A} {B}'s teacher?", "does {A} teach {B}?", ("is {B} {A}'s student?", "c"), ("is {B} taught by {A}?", "c")],
         anti=["is {A} {B}'s student?", "is {A} taught by {B}?"], pool=[PEOPLE]),
    dict(frames=["does {A} depend on {B}?", "is {A} dependent on {B}?", ("is {B} a dependency of {A}?", "c"), ("does {B} get pulled in by {A}?", "c")],
         anti=["is {A} a dependency of {B}?", "does {A} get pulled in by {B}?"], pool=[PYLIBS]),
    dict(frames=["is {A} a subsidiary of {B}?", "is {A} owned by {B}?", ("is {B} the parent company of {A}?", "c"), ("does {B} own {A}?", "c")],
         anti=["is {A} the parent company of {B}?", "does {A} own {B}?"], pool=[COMPANIES]),
    dict(frames=["does {A} outrank {B}?", "is {A} higher in rank than {B}?", ("is {B} outranked by {A}?", "c"), ("is {B} lower in rank than {A}?", "c")],
         anti=["is {A} outranked by {B}?", "is {A} lower in rank than {B}?"],
         pool=[["a colonel", "a major", "a captain", "a lieutenant", "a brigadier", "a sergeant"]]),
    dict(frames=["do {A} eat {B}?", "do {A} prey on {B}?", ("are {B} eaten by {A}?", "c"), ("are {B} prey for {A}?", "c")],
         anti=["are {A} eaten by {B}?", "are {A} prey for {B}?"],
         pool=[["foxes", "rabbits", "owls", "mice", "snakes", "frogs", "hawks", "sparrows"]]),
    dict(frames=["does {A} come before {B} in the recipe?", "is {A} done earlier than {B} in the recipe?",
                 ("does {B} come after {A} in the recipe?", "c"), ("is {B} done later than {A} in the recipe?", "c")],
         anti=["does {A} come after {B} in the recipe?", "is {A} done later than {B} in the recipe?"],
         pool=[["browning the onions", "adding the garlic", "deglazing the pan", "adding the stock", "seasoning", "resting the dough"]]),
    dict(frames=["did {A} hire {B}?", "was {B} hired by {A}?", ("was {B} brought on by {A}?", "c")],
         anti=["did {B} hire {A}?", "was {A} hired by {B}?"], pool=[PEOPLE]),
    dict(frames=["is {A} a prerequisite for {B}?", "do I need {A} before taking {B}?", ("does {B} require {A} first?", "c")],
         anti=["is {B} a prerequisite for {A}?", "do I need {B} before taking {A}?"],
         pool=[["Calculus I", "Calculus II", "Linear Algebra", "Statistics 101", "Organic Chemistry", "General Chemistry"]]),
]

# comparison pools: (ADJ, ANT, items). "is A ADJ than B" == "is B ANT than A".
CMP_POOLS = [
    ("bigger", "smaller", ["Canada", "Brazil", "Australia", "India", "Argentina", "Kazakhstan", "Algeria", "Mexico", "Indonesia"]),
    ("older", "younger", ["Rome", "Athens", "Jerusalem", "Cairo", "Beijing", "Damascus", "London", "Paris", "Kyoto"]),
    ("faster", "slower", ["a cheetah", "a greyhound", "a horse", "an ostrich", "a kangaroo", "a rabbit", "a gazelle"]),
    ("heavier", "lighter", ["Mars", "Venus", "Earth", "Mercury", "Neptune", "Uranus"]),
    ("more expensive to live in", "cheaper to live in", ["Zurich", "Oslo", "Lisbon", "Prague", "Denver", "Austin", "Dublin", "Osaka"]),
    ("harder to learn", "easier to learn", ["Japanese", "Spanish", "Polish", "Arabic", "Korean", "Dutch", "Finnish", "Portuguese"]),
    ("taller", "shorter", ["Everest", "K2", "Denali", "Kilimanjaro", "Mont Blanc", "Aconcagua", "Elbrus"]),
    ("longer", "shorter", ["the Nile", "the Amazon", "the Danube", "the Mississippi", "the Yangtze", "the Volga", "the Rhine"]),
    ("hotter in July", "cooler in July", ["Dubai", "Phoenix", "Seville", "Cairo", "Bangkok", "Houston"]),
    ("stronger", "weaker", ["steel", "aluminum", "titanium", "carbon fiber", "oak", "bamboo"]),
    ("more fuel-efficient", "less fuel-efficient", ["the Tamura Breeze", "the Corvane S", "the Halden GT", "the Orsk Valor", "the Lumen EV3"]),
    ("healthier", "less healthy", ["brown rice", "quinoa", "white bread", "oatmeal", "granola", "couscous"]),
    ("faster at runtime", "slower at runtime", ["Rust", "Python", "Go", "Java", "C++", "Ruby"]),
    ("more popular", "less popular", ["golden retrievers", "beagles", "poodles", "dachshunds", "huskies", "corgis"]),
    ("newer", "older", ["the Voltra X2", "the Nimbus 7 Pro", "the Corvo S11", "the Pixelite 4a", "the Arden One"]),
    ("more durable", "less durable", ["the Kelvane fridge", "the Brisa 500 dishwasher", "the Orbis washing machine", "the Tornado T3 vacuum"]),
    ("riskier", "safer", ["index funds", "corporate bonds", "crypto", "real estate", "gold", "small-cap stocks"]),
    ("more acidic", "less acidic", ["lemon juice", "vinegar", "coffee", "tomato juice", "orange juice", "milk"]),
    ("deeper", "shallower", ["Lake Baikal", "Lake Tahoe", "Crater Lake", "Lake Superior", "Loch Ness"]),
    ("more expensive to insure", "cheaper to insure", ["a sports car", "a minivan", "an SUV", "an electric car", "a pickup truck"]),
]
CMP_YN = ["is {A} {ADJ} than {B}?", "would you say {A} is {ADJ} than {B}?", "{A} {ADJ} than {B}?", "is it true that {A} is {ADJ} than {B}?",
          "is {A} actually {ADJ} than {B}?"]
CMP_WHICH = ["{A} or {B}, which is {ADJ}?", "which is {ADJ}, {A} or {B}?", "between {A} and {B}, which one is {ADJ}?",
             "{A} vs {B}: which is {ADJ}?", "which one is {ADJ}: {A} or {B}?", "of {A} and {B}, which is {ADJ}?"]

# symmetric items: swapping A and B keeps the meaning (label 1)
CONFUSABLES = [["baking soda", "baking powder", "cornstarch"], ["stock", "broth", "bouillon"], ["a list", "a tuple", "a set"],
               ["TCP", "UDP"], ["git merge", "git rebase"], ["a Roth IRA", "a traditional IRA", "a 401k"],
               ["a debit card", "a credit card", "a prepaid card"], ["term life insurance", "whole life insurance"],
               ["an HMO", "a PPO"], ["a will", "a living trust"], ["a misdemeanor", "a felony"], ["aperture", "shutter speed", "ISO"],
               ["a viola", "a violin", "a cello"], ["weather", "climate"], ["a virus", "a bacterium"], ["mass", "weight"],
               ["a bay", "a gulf", "a fjord"], ["annuals", "perennials"], ["HIIT", "steady-state cardio"], ["4G", "5G"],
               ["RAM", "storage"], ["a VPN", "a proxy"], ["a college", "a university"], ["a copay", "a deductible", "coinsurance"],
               ["a condo", "a townhouse"], ["a tax credit", "a tax deduction"], ["a tortoise", "a turtle"],
               ["a contractor", "an employee"], ["AWD", "4WD"], ["an SSD", "an HDD"], ["knitting", "crocheting"],
               ["the Bronze Age", "the Iron Age"], ["a sprain", "a strain"], ["a lease", "a rental agreement"]]
SYM_ITEMS = [
    dict(frames=["what's the difference between {A} and {B}?", "how do {A} and {B} differ?", "{A} vs {B} — what's the difference?",
                 "how is {A} different from {B}?", "explain the difference between {A} and {B}"], pool=CONFUSABLES),
    dict(frames=["is {A} the same as {B}?", "are {A} and {B} the same thing?", "are {A} and {B} identical?", "is {A} basically the same as {B}?"],
         pool=CONFUSABLES),
    dict(frames=["can I take {A} and {B} together?", "is it safe to combine {A} with {B}?", "{A} with {B} — safe to mix?",
                 "does {A} interact with {B}?", "is mixing {A} and {B} safe?"],
         pool=[["ibuprofen", "acetaminophen", "aspirin", "an antihistamine", "a multivitamin", "melatonin", "St John's wort"]]),
    dict(frames=["do {A} and {B} go well together?", "does {A} pair well with {B}?", "{A} and {B}: a good combination?",
                 "is {A} with {B} a good flavor pairing?"],
         pool=[["basil", "mint", "strawberries", "goat cheese", "dark chocolate", "chili", "lime", "rosemary", "honey"]]),
    dict(frames=["do {A} and {B} get along?", "can {A} and {B} live together?", "can {A} live with {B}?", "are {A} and {B} compatible as pets?"],
         pool=[["cats", "rabbits", "guinea pigs", "ferrets", "dogs", "parrots", "hamsters"]]),
    dict(frames=["what's the distance between {A} and {B}?", "how far apart are {A} and {B}?", "how many miles between {A} and {B}?",
                 "{A} and {B}: how far apart?"], pool=[CITIES]),
    dict(frames=["compare {A} and {B}", "give me a comparison of {A} and {B}", "{A} vs {B}, pros and cons?", "how do {A} and {B} compare?"],
         pool=[["the Voltra X2", "the Nimbus 7 Pro", "the Corvo S11"], ["Rust", "Go", "Kotlin", "Swift"], ["StreamLoft", "Glimmer TV", "Melodia"],
               ["the Tamura Breeze", "the Corvane S", "the Orsk Valor"], ["Lisbon", "Prague", "Dublin"]]),
    dict(frames=["which is better for {use}, {A} or {B}?", "{A} or {B} for {use}?", "for {use}, would you pick {A} or {B}?",
                 "{A} vs {B}: which is better for {use}?"],
         usepool=[("beginners", ["Python", "JavaScript", "Java", "C#"]), ("a small apartment", ["a cat", "a dog", "a rabbit"]),
                  ("long road trips", ["the Tamura Breeze", "the Corvane S", "the Orsk Valor"]), ("night photography", ["a prime lens", "a zoom lens"]),
                  ("retirement savings", ["a Roth IRA", "a traditional IRA"]), ("a sore back", ["yoga", "pilates", "swimming"]),
                  ("shady gardens", ["hostas", "ferns", "astilbe"]), ("a first job", ["a startup", "a large company"]),
                  ("family travel", ["a minivan", "an SUV"])]),
    dict(frames=["do {A} and {B} share a border?", "does {A} border {B}?", "are {A} and {B} neighbors?", "is {A} next to {B}?"],
         pool=[["France", "Spain", "Germany", "Italy", "Switzerland", "Austria"], ["Kenya", "Tanzania", "Uganda", "Ethiopia"],
               ["Peru", "Chile", "Bolivia", "Brazil"]]),
    dict(frames=["are {A} and {B} related?", "is {A} related to {B}?", "do {A} and {B} have a family connection?"],
         pool=[PEOPLE]),
]

# ---------------------------------------------------------------------------
# Engine
# ---------------------------------------------------------------------------
DOUBLE = {"set", "run", "cut", "stop", "plan", "put", "get", "swap", "drop", "ship", "chop", "trim", "plug", "dig", "jog", "log",
          "skip", "tap", "pin", "shop", "wrap", "clip", "scan", "ban", "grab", "pat", "tag", "rub", "sit", "hit", "let", "fit",
          "spin", "step", "mop", "prop", "sip", "zip", "quit", "submit", "admit", "commit", "refer", "prefer", "transfer", "top",
          "pop", "cap", "nap", "map", "dip", "rip", "strip", "snap", "jam", "hug", "beg", "chat", "pet", "wet", "knit", "forget",
          "begin", "regret", "upset", "reset", "format", "program", "thin", "bat", "slim", "dim", "rebut", "equip", "shut",
          "unclog", "mod", "repot", "swim", "sublet", "blur"}
ING_EXC = {"lie": "lying", "die": "dying", "tie": "tying", "see": "seeing", "be": "being", "free": "freeing", "agree": "agreeing",
           "co-sleep": "co-sleeping", "double": "doubling"}


def ing_word(w):
    if w in ING_EXC:
        return ING_EXC[w]
    if w in DOUBLE:
        return w + w[-1] + "ing"
    if w.endswith("ie"):
        return w[:-2] + "ying"
    if w.endswith("e") and not w.endswith(("ee", "oe", "ye")):
        return w[:-1] + "ing"
    return w + "ing"


def ing(phrase):
    words = phrase.split(" ")
    # compound verbs written as two words ("house train", "potty train", "price match", "jump start")
    if words[0] in ("house", "potty", "price", "jump", "force") and len(words) > 1:
        return words[0] + " " + ing_word(words[1]) + (" " + " ".join(words[2:]) if len(words) > 2 else "")
    return " ".join([ing_word(words[0])] + words[1:])


def third(phrase):
    words = phrase.split(" ")
    w = words[0]
    if w.endswith(("s", "sh", "ch", "x")):
        w = w + "es"
    elif w.endswith("y") and w[-2:-1] not in "aeiou":
        w = w[:-1] + "ies"
    else:
        w = w + "s"
    return " ".join([w] + words[1:])


def ftext(f):
    return f[0] if isinstance(f, tuple) else f


def ftag(f):
    return f[1] if isinstance(f, tuple) else ""


def render(frame, vals):
    return ftext(frame).format(**vals)


def two_frames(rng, frames, same_p=0.0):
    fa = rng.choice(frames)
    if len(frames) < 2 or rng.random() < same_p:
        return fa, fa
    fb = rng.choice([f for f in frames if f is not fa])
    return fa, fb


def act_pool(d):
    dd = DOMAINS[d]
    return dd["acts"] + [s for p in dd["syn"] for s in p] + [s for p in dd["opp"] for s in p]


ALL_ACTS = [a for d in DOMAINS for a in act_pool(d)]


def xvals(x):
    return {"x": x, "xing": ing(x)}


# ---- action groups --------------------------------------------------------
def g_act_contrast(rng, kind):
    g1, g2, _ = rng.choice([c for c in CONTRASTS if c[2] == kind])
    d = rng.choice(list(DOMAINS))
    x = rng.choice(act_pool(d))
    v = xvals(x)
    return render(rng.choice(GROUPS[g1][1]), v), render(rng.choice(GROUPS[g2][1]), v), kind


def g_ww_contrast(rng):
    g1, g2, kind = rng.choice(WW_CONTRASTS)
    d = rng.choice(list(DOMAINS))
    x, t = rng.choice(DOMAINS[d]["ww"])
    v = {"x": x, "t": t}
    return render(rng.choice(WW_GROUPS[g1][1]), v), render(rng.choice(WW_GROUPS[g2][1]), v), kind


def g_act_opposite(rng):
    g = rng.choice(list(GROUPS))
    d = rng.choice([k for k in DOMAINS if DOMAINS[k]["opp"]])
    x1, x2 = rng.choice(DOMAINS[d]["opp"])
    fa, fb = two_frames(rng, GROUPS[g][1], same_p=0.5)
    return render(fa, xvals(x1)), render(fb, xvals(x2)), "opposite"


def g_act_topic(rng):
    g = rng.choice(list(GROUPS))
    d = rng.choice(list(DOMAINS))
    x1, x2 = rng.sample(DOMAINS[d]["acts"], 2)
    fa, fb = two_frames(rng, GROUPS[g][1], same_p=0.6)
    return render(fa, xvals(x1)), render(fb, xvals(x2)), "topic_change"


def g_act_reframe(rng, polarity):
    g = rng.choice([k for k, (p, _) in GROUPS.items() if p == polarity])
    d = rng.choice(list(DOMAINS))
    v = xvals(rng.choice(act_pool(d)))
    fa, fb = two_frames(rng, GROUPS[g][1])
    return render(fa, v), render(fb, v), ("para_reframe" if polarity == "+" else "para_negation_keep")


def g_ww_reframe(rng, polarity):
    g = rng.choice([k for k, (p, _) in WW_GROUPS.items() if p == polarity])
    d = rng.choice(list(DOMAINS))
    x, t = rng.choice(DOMAINS[d]["ww"])
    fa, fb = two_frames(rng, WW_GROUPS[g][1])
    return render(fa, {"x": x, "t": t}), render(fb, {"x": x, "t": t}), ("para_reframe" if polarity == "+" else "para_negation_keep")


def g_act_synonym(rng):
    g = rng.choice(list(GROUPS))
    d = rng.choice(list(DOMAINS))
    x1, x2 = rng.choice(DOMAINS[d]["syn"])
    fa, fb = two_frames(rng, GROUPS[g][1], same_p=0.45)
    return render(fa, xvals(x1)), render(fb, xvals(x2)), "para_synonym"


# ---- conditions -------------------------------------------------------------
ALL_CONDS = sorted({c for p in COND_CONTRAST for c in p[:2]} | {c for p in COND_SYN for c in p})


def cond_render(rng, pair, c, x, pos=None):
    pos = rng.randrange(2) if pos is None else pos
    return pair[pos].format(c=c, **xvals(x))


def g_cond_reorder(rng):
    pair = rng.choice(COND_FRAMES)
    c = rng.choice(ALL_CONDS)
    x = rng.choice(ALL_ACTS)
    return cond_render(rng, pair, c, x, 0), cond_render(rng, pair, c, x, 1), "para_reorder"


def g_cond_contrast(rng, kinds):
    c1, c2, kind = rng.choice([p for p in COND_CONTRAST if p[2] in kinds])
    pair = rng.choice(COND_FRAMES)
    x = rng.choice(ALL_ACTS)
    return cond_render(rng, pair, c1, x), cond_render(rng, pair, c2, x), kind


def g_cond_synonym(rng):
    c1, c2 = rng.choice(COND_SYN)
    pair = rng.choice(COND_FRAMES)
    x = rng.choice(ALL_ACTS)
    return cond_render(rng, pair, c1, x), cond_render(rng, pair, c2, x), "para_synonym"


def g_cond_drop(rng):
    pair = rng.choice(COND_FRAMES)
    c = rng.choice(ALL_CONDS)
    x = rng.choice(ALL_ACTS)
    base = pair[1].replace(" {c}", "").format(**xvals(x))
    return cond_render(rng, pair, c, x), base, "scope"


# ---- slot items -------------------------------------------------------------
SLOT_ITEMS = RANGE_ITEMS + SCOPE_ITEMS + ENTITY_ITEMS + NUMBER_ITEMS + NEGKEEP_ITEMS


def fill_item(item, rng):
    vals = {}
    for name, lst in item.get("slots", {}).items():
        vals[name] = rng.choice(lst)
    for name, prs in item.get("pairs", {}).items():
        if name not in vals:
            vals[name] = rng.choice(rng.choice(prs)[:2])
    if item.get("act"):
        vals.update(xvals(rng.choice(ALL_ACTS)))
    return vals


def item_options(item, kinds):
    opts = []
    for name, prs in item.get("pairs", {}).items():
        for pr in prs:
            if pr[2] in kinds:
                opts.append((name, pr, pr[2]))
    for name, kind in item.get("vary", {}).items():
        if kind in kinds:
            opts.append((name, None, kind))
    return opts


def g_item_negative(rng, items, kinds):
    cands = [it for it in items if item_options(it, kinds)]
    item = rng.choice(cands)
    name, pr, kind = rng.choice(item_options(item, kinds))
    va = fill_item(item, rng)
    vb = dict(va)
    if pr is not None:
        a, b = pr[0], pr[1]
    else:
        a, b = rng.sample(item["slots"][name], 2)
    va[name], vb[name] = a, b
    fa, fb = two_frames(rng, item["frames"], same_p=0.45)
    return render(fa, va), render(fb, vb), kind


def g_item_reframe(rng, items, kind="para_reframe"):
    item = rng.choice(items)
    v = fill_item(item, rng)
    fa, fb = two_frames(rng, item["frames"])
    return render(fa, v), render(fb, v), kind


def g_item_synonym(rng, items):
    item = rng.choice([it for it in items if it.get("syn")])
    name = rng.choice(list(item["syn"]))
    a, b = rng.choice(item["syn"][name])
    va = fill_item(item, rng)
    vb = dict(va)
    va[name], vb[name] = a, b
    fa, fb = two_frames(rng, item["frames"], same_p=0.45)
    return render(fa, va), render(fb, vb), "para_synonym"


# ---- effect items -----------------------------------------------------------
def eff_vals(t, o, p):
    return {"T": t, "O": o, "P": p, "P3": third(p)}


def g_effect(rng, mode):
    t, o = rng.choice(EFFECT_TO)
    if mode == "neg":
        p1, p2 = rng.choice(EFFECT_VERBS_NEG)
        kind = "opposite"
    elif mode == "syn":
        p1, p2 = rng.choice(EFFECT_VERBS_SYN)
        kind = "para_synonym"
    else:
        p1 = p2 = rng.choice([v for pr in EFFECT_VERBS_NEG for v in pr])
        kind = "para_reframe"
    if rng.random() < 0.5:
        p1, p2 = p2, p1
    fa, fb = two_frames(rng, EFFECT_FRAMES, same_p=0.0 if mode == "re" else 0.45)
    return render(fa, eff_vals(t, o, p1)), render(fb, eff_vals(t, o, p2)), kind


# ---- direction / converse / comparison / symmetric ---------------------------
def pick_ab(item, rng):
    vals = {name: rng.choice(lst) for name, lst in item.get("slots", {}).items()}
    if "pairpool" in item:
        a, b = rng.choice(item["pairpool"])
        return a, b, None, vals
    if "usepool" in item:
        use, lst = rng.choice(item["usepool"])
        vals["use"] = use
    else:
        lst = rng.choice(item["pool"])
    a, b = rng.sample(lst, 2)
    return a, b, lst, vals


def ab(vals, a, b):
    v = dict(vals)
    v["A"], v["B"] = a, b
    return v


def g_dir(rng, mode):
    if mode == "reorder":
        item = rng.choice([it for it in DIR_ITEMS if any(ftag(f) == "r" for f in it["frames"])])
    else:
        item = rng.choice(DIR_ITEMS)
    a, b, lst, vals = pick_ab(item, rng)
    frames = item["frames"]
    if mode == "neg":
        fa, fb = two_frames(rng, frames, same_p=0.4)
        return render(fa, ab(vals, a, b)), render(fb, ab(vals, b, a)), "direction"
    if mode == "entity":
        if lst is None or len(lst) < 3:
            return None
        c = rng.choice([x for x in lst if x not in (a, b)])
        fa, fb = two_frames(rng, frames, same_p=0.5)
        vb = ab(vals, a, c) if rng.random() < 0.5 else ab(vals, c, b)
        return render(fa, ab(vals, a, b)), render(fb, vb), "entity"
    if mode == "reorder":
        fa = rng.choice([f for f in frames if ftag(f) == "r"])
        fb = rng.choice([f for f in frames if ftag(f) != "r"])
        return render(fa, ab(vals, a, b)), render(fb, ab(vals, a, b)), "para_reorder"
    plain = [f for f in frames if ftag(f) != "r"]
    fa, fb = two_frames(rng, plain)
    return render(fa, ab(vals, a, b)), render(fb, ab(vals, a, b)), "para_reframe"


def g_conv(rng, mode):
    item = rng.choice(CONVERSE_ITEMS)
    a, b, lst, vals = pick_ab(item, rng)
    base = [f for f in item["frames"] if ftag(f) != "c"]
    conv = [f for f in item["frames"] if ftag(f) == "c"]
    allf = item["frames"]
    if mode == "pos":
        if rng.random() < 0.6:
            return render(rng.choice(base), ab(vals, a, b)), render(rng.choice(conv), ab(vals, a, b)), "para_converse"
        # anti relation with swapped arguments says the same thing
        return render(rng.choice(base), ab(vals, a, b)), render(rng.choice(item["anti"]), ab(vals, b, a)), "para_converse"
    if mode == "re":
        fa, fb = two_frames(rng, base)
        return render(fa, ab(vals, a, b)), render(fb, ab(vals, a, b)), "para_reframe"
    if mode == "swap":
        fa, fb = two_frames(rng, allf, same_p=0.5)
        return render(fa, ab(vals, a, b)), render(fb, ab(vals, b, a)), "direction"
    if mode == "anti":
        return render(rng.choice(allf), ab(vals, a, b)), render(rng.choice(item["anti"]), ab(vals, a, b)), "opposite"
    if mode == "entity":
        if lst is None or len(lst) < 3:
            return None
        c = rng.choice([x for x in lst if x not in (a, b)])
        fa, fb = two_frames(rng, allf, same_p=0.5)
        vb = ab(vals, a, c) if rng.random() < 0.5 else ab(vals, c, b)
        return render(fa, ab(vals, a, b)), render(fb, vb), "entity"


def cmp_text(frame, adj, ant, flag, x, y):
    return frame.format(A=x, B=y, ADJ=adj if flag > 0 else ant)


def g_cmp_yn(rng, want):
    adj, ant, items = rng.choice(CMP_POOLS)
    x, y = rng.sample(items, 2)
    f1, f2 = rng.choice(CMP_YN), rng.choice(CMP_YN)
    s1 = (1, 0)  # (flag, swapped)
    if want == "converse":
        s2 = (-1, 1)
    elif want == "reframe":
        s2 = (1, 0)
        if f1 == f2:
            f2 = rng.choice([f for f in CMP_YN if f != f1])
    elif want == "direction":
        s2 = (1, 1)
    elif want == "opposite":
        s2 = (-1, 0)
    else:  # entity
        z = rng.choice([i for i in items if i not in (x, y)])
        a = cmp_text(f1, adj, ant, 1, x, y)
        b = cmp_text(f2, adj, ant, 1, x, z) if rng.random() < 0.5 else cmp_text(f2, adj, ant, 1, z, y)
        return a, b, "entity"
    if rng.random() < 0.5:  # express the base from the other side too
        s1 = (-s1[0], 1 - s1[1])
        s2 = (-s2[0], 1 - s2[1])
    a = cmp_text(f1, adj, ant, s1[0], *((y, x) if s1[1] else (x, y)))
    b = cmp_text(f2, adj, ant, s2[0], *((y, x) if s2[1] else (x, y)))
    kind = {"converse": "para_converse", "reframe": "para_reframe", "direction": "direction", "opposite": "opposite"}[want]
    return a, b, kind


def g_cmp_which(rng, want):
    adj, ant, items = rng.choice(CMP_POOLS)
    x, y = rng.sample(items, 2)
    f1, f2 = rng.choice(CMP_WHICH), rng.choice(CMP_WHICH)
    flag = rng.choice([1, -1])
    a = cmp_text(f1, adj, ant, flag, x, y)
    if want == "symmetric":
        return a, cmp_text(f2, adj, ant, flag, y, x), "para_symmetric"
    if want == "opposite":
        return a, cmp_text(f2, adj, ant, -flag, *((x, y) if rng.random() < 0.5 else (y, x))), "opposite"
    z = rng.choice([i for i in items if i not in (x, y)])
    return a, cmp_text(f2, adj, ant, flag, *((x, z) if rng.random() < 0.5 else (z, y))), "entity"


def g_sym(rng, mode):
    item = rng.choice(SYM_ITEMS)
    a, b, lst, vals = pick_ab(item, rng)
    if mode == "pos":
        fa, fb = two_frames(rng, item["frames"], same_p=0.4)
        return render(fa, ab(vals, a, b)), render(fb, ab(vals, b, a)), "para_symmetric"
    if mode == "re":
        fa, fb = two_frames(rng, item["frames"])
        return render(fa, ab(vals, a, b)), render(fb, ab(vals, a, b)), "para_reframe"
    if len(lst) < 3:
        return None
    c = rng.choice([x for x in lst if x not in (a, b)])
    fa, fb = two_frames(rng, item["frames"], same_p=0.5)
    vb = ab(vals, a, c) if rng.random() < 0.5 else ab(vals, c, b)
    if rng.random() < 0.5:
        vb = ab(vals, vb["B"], vb["A"])
    return render(fa, ab(vals, a, b)), render(fb, vb), "entity"


# ---------------------------------------------------------------------------
# Surface noise (applied independently to each side of every pair)
# ---------------------------------------------------------------------------
PREFIXES = ["hi, quick question: ", "hey, ", "so ", "um, ", "quick one - ", "sorry if this is a dumb question, but ", "hello! ",
            "question: ", "ok so ", "can you help? ", "hi there. ", "random question, ", "help: ", "hey there, ", "good morning! ",
            "I have a question: ", "need some advice: ", "hiya, "]
SUFFIXES = [" thanks", " thx", " pls", " thanks in advance", " cheers", " (asking for a friend)", " any idea?", " :)",
            " thank you!", " please help", " ty"]
CASUAL = [(r"\byou\b", "u"), (r"\byour\b", "ur"), (r"\bplease\b", "pls"), (r"\bI'm\b", "im"), (r"\bdon't\b", "dont"),
          (r"\bcan't\b", "cant"), (r"\bwhat's\b", "whats"), (r"\bdoesn't\b", "doesnt"), (r"\bisn't\b", "isnt"),
          (r"\bshouldn't\b", "shouldnt"), (r"\bbecause\b", "cuz"), (r"\bwant to\b", "wanna"), (r"\bgoing to\b", "gonna"),
          (r"\bI\b", "i"), (r"\bthanks\b", "thx"), (r"\bokay\b", "ok"), (r"\bwhat is\b", "whats")]
PROTECT = {"never", "without", "always", "under", "above", "below", "before", "after", "until", "since", "within", "beyond",
           "least", "more", "less", "earlier", "later", "cannot", "shouldn", "unsafe", "avoid", "increase", "decrease"}
STARTERS = {"how", "what", "what's", "is", "can", "should", "do", "does", "why", "would", "will", "am", "may", "must", "tell",
            "give", "remind", "add", "set", "explain", "convince", "help", "if", "during", "while", "when", "on", "for", "compare",
            "which", "did", "was", "are", "could", "walk", "put", "make", "create", "assist", "show", "pull", "translate",
            "please", "recommend", "list", "convert", "cheapest", "good", "best", "top-rated", "moving", "flying", "baking",
            "paying", "cancelling", "driving", "graduating", "sleeping", "calls", "adding", "copying", "trading", "going",
            "retiring", "used", "present", "gift", "calories", "roasting", "monthly", "penalty", "paint", "video", "normal",
            "at", "in", "with", "before", "after", "within", "more", "tips", "steps", "i", "my", "someone", "tomorrow", "front",
            "extra", "fee", "lawn", "starting", "cost", "price", "tuition", "mute", "resting", "museum", "gate", "wake", "book",
            "reserve", "of", "between", "too", "getting", "altitude", "set", "granting", "upgrade", "cancel", "reserve"}


def typo(word, rng):
    i = rng.randrange(1, len(word) - 2)
    op = rng.random()
    if op < 0.5:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op < 0.75:
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def noise(s, rng, heavy=False):
    h = 2.5 if heavy else 1.0
    t = s
    if rng.random() < 0.2 * h:
        t = t.replace(" — ", rng.choice([" - ", " -- ", ", ", " "]))
    if rng.random() < 0.08 * h:
        t = t.replace(",", "")
    if rng.random() < 0.12 * h:
        words = list(re.finditer(r"[A-Za-z]{5,}", t))
        words = [m for m in words if m.group(0).lower() not in PROTECT]
        if words:
            m = rng.choice(words)
            t = t[:m.start()] + typo(m.group(0), rng) + t[m.end():]
    if rng.random() < 0.12 * h:
        for pat, rep in CASUAL:
            if rng.random() < 0.7:
                t = re.sub(pat, rep, t)
    if t.endswith("?"):
        r = rng.random()
        if r < 0.2 * h:
            t = t[:-1]
        elif r < 0.2 * h + 0.04:
            t = t + "?"
    prefixed = False
    if rng.random() < 0.12 * h:
        p = rng.choice(PREFIXES)
        first = t.split(" ", 1)[0].lower()
        if first in STARTERS:
            t = t[0].lower() + t[1:]
        if rng.random() < 0.6:
            p = p[0].upper() + p[1:]
        t = p + t
        prefixed = True
    if rng.random() < 0.08 * h:
        t = t + rng.choice(SUFFIXES)
    r = rng.random()
    if r < 0.22 * h:
        t = t.lower()
    elif r < 0.22 * h + 0.01:
        t = t.upper()
    elif not prefixed and rng.random() < 0.75:
        t = t[0].upper() + t[1:]
    return re.sub(r"\s+", " ", t).strip()


# ---------------------------------------------------------------------------
# Kind generators
# ---------------------------------------------------------------------------
def choose(rng, table):
    r = rng.random() * sum(w for w, _ in table)
    for w, fn in table:
        r -= w
        if r <= 0:
            return fn()
    return table[-1][1]()


def make_kinds(rng):
    S = SLOT_ITEMS
    return {
        # ---------------- label 0 ----------------
        "negation": (0, [(0.62, lambda: g_act_contrast(rng, "negation")), (0.26, lambda: g_ww_contrast(rng)),
                         (0.12, lambda: g_cond_contrast(rng, {"negation"}))]),
        "modality": (0, [(1.0, lambda: g_act_contrast(rng, "modality"))]),
        "direction": (0, [(0.55, lambda: g_dir(rng, "neg")), (0.25, lambda: g_conv(rng, "swap")),
                          (0.2, lambda: g_cmp_yn(rng, "direction"))]),
        "comparative": (0, [(0.8, lambda: g_item_negative(rng, S, {"comparative"})),
                            (0.2, lambda: g_cond_contrast(rng, {"comparative"}))]),
        "scope": (0, [(0.62, lambda: g_item_negative(rng, S, {"scope"})), (0.28, lambda: g_cond_contrast(rng, {"scope"})),
                      (0.10, lambda: g_cond_drop(rng))]),
        "opposite": (0, [(0.42, lambda: g_act_opposite(rng)), (0.13, lambda: g_cmp_yn(rng, "opposite")),
                         (0.13, lambda: g_cmp_which(rng, "opposite")), (0.17, lambda: g_effect(rng, "neg")),
                         (0.1, lambda: g_conv(rng, "anti")), (0.05, lambda: g_cond_contrast(rng, {"opposite"}))]),
        "entity": (0, [(0.45, lambda: g_item_negative(rng, S, {"entity"})), (0.15, lambda: g_sym(rng, "entity")),
                       (0.1, lambda: g_dir(rng, "entity")), (0.07, lambda: g_conv(rng, "entity")),
                       (0.08, lambda: g_cmp_yn(rng, "entity")), (0.1, lambda: g_cmp_which(rng, "entity")),
                       (0.05, lambda: g_cond_contrast(rng, {"entity"}))]),
        "number": (0, [(0.92, lambda: g_item_negative(rng, S, {"number"})), (0.08, lambda: g_cond_contrast(rng, {"number"}))]),
        "topic_change": (0, [(1.0, lambda: g_act_topic(rng))]),
        # ---------------- label 1 ----------------
        "para_reframe": (1, [(0.33, lambda: g_act_reframe(rng, "+")), (0.05, lambda: g_ww_reframe(rng, "+")),
                             (0.37, lambda: g_item_reframe(rng, RANGE_ITEMS + SCOPE_ITEMS + ENTITY_ITEMS + NUMBER_ITEMS)),
                             (0.06, lambda: g_effect(rng, "re")), (0.07, lambda: g_dir(rng, "re")),
                             (0.04, lambda: g_conv(rng, "re")), (0.04, lambda: g_cmp_yn(rng, "reframe")),
                             (0.04, lambda: g_sym(rng, "re"))]),
        "para_synonym": (1, [(0.4, lambda: g_act_synonym(rng)), (0.4, lambda: g_item_synonym(rng, S)),
                             (0.1, lambda: g_cond_synonym(rng)), (0.1, lambda: g_effect(rng, "syn"))]),
        "para_reorder": (1, [(0.72, lambda: g_cond_reorder(rng)), (0.28, lambda: g_dir(rng, "reorder"))]),
        "para_casual": (1, [(1.0, lambda: g_casual_base(rng))]),
        "para_symmetric": (1, [(0.6, lambda: g_sym(rng, "pos")), (0.4, lambda: g_cmp_which(rng, "symmetric"))]),
        "para_converse": (1, [(0.55, lambda: g_conv(rng, "pos")), (0.45, lambda: g_cmp_yn(rng, "converse"))]),
        "para_negation_keep": (1, [(0.62, lambda: g_act_reframe(rng, "-")), (0.1, lambda: g_ww_reframe(rng, "-")),
                                   (0.28, lambda: g_item_reframe(rng, NEGKEEP_ITEMS, "para_negation_keep"))]),
    }


def g_casual_base(rng):
    """One question, written twice with independent heavy noise (politeness, casual typing)."""
    r = rng.random()
    if r < 0.45:
        g = rng.choice(list(GROUPS))
        q = render(rng.choice(GROUPS[g][1]), xvals(rng.choice(ALL_ACTS)))
    elif r < 0.8:
        item = rng.choice(SLOT_ITEMS)
        q = render(rng.choice(item["frames"]), fill_item(item, rng))
    elif r < 0.9:
        item = rng.choice(DIR_ITEMS + SYM_ITEMS)
        a, b, _, vals = pick_ab(item, rng)
        q = render(rng.choice(item["frames"]), ab(vals, a, b))
    else:
        pair = rng.choice(COND_FRAMES)
        q = cond_render(rng, pair, rng.choice(ALL_CONDS), rng.choice(ALL_ACTS))
    return q, q, "para_casual"


TARGETS = {
    "negation": 270, "modality": 230, "direction": 260, "comparative": 260, "scope": 260, "opposite": 260,
    "entity": 200, "number": 190, "topic_change": 70,
    "para_reframe": 330, "para_synonym": 300, "para_reorder": 260, "para_casual": 250, "para_symmetric": 280,
    "para_converse": 270, "para_negation_keep": 310,
}


def norm(s):
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s.lower()).split())


def main():
    rng = random.Random(0)
    kinds = make_kinds(rng)
    seen = {}
    rows = []
    stats = {"dup": 0, "conflict": 0, "trivial": 0}
    for kind, (label, table) in kinds.items():
        got, tries = 0, 0
        while got < TARGETS[kind] and tries < TARGETS[kind] * 60:
            tries += 1
            res = choose(rng, table)
            if res is None:
                continue
            a, b, k = res
            assert k == kind, (k, kind, a, b)
            heavy = kind == "para_casual"
            a = noise(a, rng, heavy=heavy or rng.random() < 0.12)
            b = noise(b, rng, heavy=heavy or rng.random() < 0.12)
            if rng.random() < 0.5:
                a, b = b, a
            na, nb = norm(a), norm(b)
            if na == nb and (label == 0 or a.lower() == b.lower()):
                stats["trivial"] += 1
                if label == 0:
                    raise AssertionError("negative pair identical after normalisation: %r / %r" % (a, b))
                continue
            key = tuple(sorted((na, nb)))
            if key in seen:
                stats["conflict" if seen[key] != label else "dup"] += 1
                continue
            seen[key] = label
            rows.append({"a": a, "b": b, "label": label, "kind": kind})
            got += 1
    rng.shuffle(rows)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_structure.jsonl")
    with open(out, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {}
    for r in rows:
        counts[(r["kind"], r["label"])] = counts.get((r["kind"], r["label"]), 0) + 1
    for (k, l), n in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print("%-20s label=%d  %d" % (k, l, n))
    print("label 0: %d  label 1: %d  total: %d" % (sum(1 for r in rows if r["label"] == 0),
                                                   sum(1 for r in rows if r["label"] == 1), len(rows)))
    print("skipped:", stats)
    print("wrote", out)


if __name__ == "__main__":
    main()
