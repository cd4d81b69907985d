"""Direction / argument-order lexicon.

ASYM groups: every frame in a group asks the SAME directed question about
({a} -> {b}); frames inside a group are interchangeable paraphrases (label 1),
and swapping {a}/{b} changes the answer (label 0). Several paraphrases put
{b} before {a} on the surface while keeping the direction.

SYM groups: the relation is symmetric, so swapping {a}/{b} keeps the answer.
"""

UNITS = [("miles", "kilometers"), ("Celsius", "Fahrenheit"), ("pounds", "kilograms"),
         ("inches", "centimeters"), ("feet", "meters"), ("ounces", "grams"),
         ("gallons", "liters"), ("cups", "milliliters"), ("mph", "km/h"),
         ("acres", "hectares"), ("square feet", "square meters"), ("teaspoons", "milliliters"),
         ("Kelvin", "Celsius"), ("kilojoules", "calories"), ("horsepower", "kilowatts"),
         ("psi", "bar"), ("yards", "meters"), ("fluid ounces", "milliliters"),
         ("stones", "pounds"), ("nautical miles", "kilometers"), ("tablespoons", "grams"),
         ("quarts", "liters"), ("knots", "mph"), ("millimeters", "inches")]

CURRENCIES = ["US dollars", "euros", "British pounds", "Japanese yen", "Canadian dollars",
              "Swiss francs", "Mexican pesos", "Indian rupees", "Australian dollars",
              "South Korean won", "Swedish krona", "Brazilian reais", "Thai baht",
              "Turkish lira", "Polish zloty", "New Zealand dollars"]

FMT_GROUPS = [["HEIC", "JPG", "PNG", "GIF", "WebP", "TIFF", "BMP"],
              ["PDF", "Word", "plain text", "Markdown", "HTML", "EPUB", "RTF"],
              ["CSV", "Excel", "JSON", "XML", "YAML", "Parquet"],
              ["WAV", "MP3", "FLAC", "M4A", "OGG", "AAC"],
              ["MP4", "MOV", "AVI", "MKV", "WebM", "GIF"]]

HUMAN_LANGS = ["English", "Spanish", "French", "German", "Japanese", "Portuguese", "Korean",
               "Italian", "Mandarin", "Arabic", "Hindi", "Dutch", "Polish", "Turkish",
               "Swahili", "Vietnamese", "Russian", "Greek", "Tagalog", "Ukrainian"]

ACCOUNTS = ["checking account", "savings account", "brokerage account", "money market account",
            "HSA", "joint account", "business account", "PayNest wallet", "Quidly balance",
            "high-yield savings account", "Roth IRA"]

RETIREMENT = ["401(k)", "traditional IRA", "Roth IRA", "403(b)", "SEP IRA", "pension plan",
              "457 plan", "solo 401(k)"]

ROLES = [("employee", "employer"), ("tenant", "landlord"), ("patient", "hospital"),
         ("student", "university"), ("customer", "company"), ("contractor", "homeowner"),
         ("franchisee", "franchisor"), ("author", "publisher"), ("subcontractor",
         "general contractor"), ("buyer", "seller"), ("borrower", "lender"),
         ("band", "venue"), ("freelancer", "client")]

MIGRATIONS = [["Android", "iPhone"], ["Windows", "Mac", "Linux"],
              ["MySQL", "PostgreSQL", "MongoDB", "SQLite", "Oracle"],
              ["AWS", "Azure", "Google Cloud", "Heroku"],
              ["React", "Vue", "Angular", "Svelte"],
              ["Jenkins", "GitHub Actions", "GitLab CI", "CircleCI"],
              ["Excel", "Google Sheets", "Numbers"],
              ["Spotify", "Tunely", "SoundHarbor"],
              ["Chrome", "Firefox", "Safari", "Edge"],
              ["LastPass", "Bitwarden", "KeyVault", "1Password"],
              ["Evernote", "Noteworthy", "Notion", "OneNote"],
              ["Python 2", "Python 3"], ["JavaScript", "TypeScript"],
              ["QuickBooks", "Ledgerly", "Xero"], ["Slack", "ChatNest", "Teams"]]

CARRIERS = ["Veltro Mobile", "SkyLine Wireless", "Halcyon Telecom", "NovaCell", "Brightwave",
            "Tidal Mobile", "Pinepoint Wireless"]

BRANCHES = ["main", "develop", "feature/login", "release/2.0", "hotfix/payment", "staging",
            "master", "feature/search", "dev", "prod"]

TYPE_PAIRS = [("string", "integer"), ("string", "float"), ("integer", "float"),
              ("list", "tuple"), ("list", "set"), ("dictionary", "JSON string"),
              ("byte array", "string"), ("date object", "string"),
              ("Unix timestamp", "date object"), ("list", "dictionary"), ("array", "list"),
              ("string", "list of characters"), ("string", "boolean"),
              ("hex string", "integer"), ("integer", "binary string"),
              ("char", "integer"), ("map", "array of pairs"), ("Base64 string", "byte array")]

LOCATIONS = [("a Docker container", "the host"), ("my laptop", "a remote server"),
             ("an S3 bucket", "my local machine"), ("my phone", "my computer"),
             ("an SD card", "my laptop"), ("a VM", "the host machine"),
             ("my old laptop", "my new laptop"), ("{CLOUD}", "an external drive"),
             ("a Kubernetes pod", "my machine"), ("a NAS", "my desktop"),
             ("the production server", "the staging server")]

REDIRECTS = [("http", "https"), ("www", "non-www"), ("the old domain", "the new domain"),
             ("/blog", "/news"), ("the root path", "/home"), ("example.org", "example.com")]

MAIL_PAIRS = [("work", "personal"), ("Gmail", "Outlook"), ("old", "new"), ("school", "personal"),
              ("Lumen Mail", "Gmail"), ("Postbox", "Mailwise"), ("business", "private")]

PHONES = [("landline", "mobile"), ("work phone", "cell phone"), ("old number", "new number"),
          ("office line", "home phone"), ("Google Voice number", "cell")]

WALLETS = ["PayNest", "Quidly", "ZapCash", "Finch Wallet", "my bank account", "my debit card",
           "my Roamly card"]

SCHOOLS = ["a community college", "a four-year university", "an online program",
           "a state university", "a university abroad", "{SCHOOL}", "a trade school",
           "an Ivy League school"]

PHARMACIES = ["Greenleaf Pharmacy", "CareWay Drug", "Mercer Apothecary", "QuickRx",
              "Sunrise Pharmacy", "a mail-order pharmacy", "my local pharmacy"]

TIERS = ["Basic", "Standard", "Premium", "Family", "Pro", "Free", "Plus", "Student",
         "Ad-Supported", "Business"]

SUBS = [("butter", "oil"), ("honey", "sugar"), ("baking soda", "baking powder"),
        ("Greek yogurt", "sour cream"), ("almond milk", "cow's milk"), ("margarine", "butter"),
        ("bread flour", "all-purpose flour"), ("maple syrup", "honey"),
        ("lime juice", "lemon juice"), ("brown sugar", "white sugar"),
        ("heavy cream", "half-and-half"), ("cornstarch", "flour"), ("applesauce", "eggs"),
        ("coconut oil", "vegetable oil"), ("buttermilk", "regular milk"),
        ("whole wheat flour", "white flour"), ("stevia", "sugar"), ("oat milk", "milk"),
        ("shallots", "onions"), ("dried herbs", "fresh herbs"), ("red wine", "white wine"),
        ("chicken broth", "vegetable broth")]

DISHES = ["banana bread", "brownies", "pancakes", "cookies", "muffins", "a cake", "a marinade",
          "salad dressing", "a stir-fry", "a soup", "a pie crust", "waffles", "a curry",
          "mac and cheese", "a quiche", "scones"]

TRANSFORM = [("ice", "water"), ("graphite", "diamond"), ("a caterpillar", "a butterfly"),
             ("a tadpole", "a frog"), ("limestone", "marble"), ("glucose", "starch"),
             ("a red giant", "a white dwarf"), ("sedimentary rock", "metamorphic rock"),
             ("milk", "cheese"), ("grapes", "raisins"), ("sand", "glass"),
             ("a seed", "a tree"), ("water vapor", "snow"), ("coal", "graphite"),
             ("magma", "granite"), ("sugar", "alcohol")]

EFFECTS = [("sleep", "memory"), ("caffeine", "blood pressure"), ("inflation", "interest rates"),
           ("temperature", "battery life"), ("stress", "digestion"),
           ("screen time", "sleep quality"), ("exercise", "mood"),
           ("humidity", "paint drying time"), ("interest rates", "housing prices"),
           ("oil prices", "airfares"), ("unemployment", "inflation"),
           ("altitude", "boiling point"), ("RAM", "CPU performance"),
           ("credit utilization", "credit score"), ("diet", "gut bacteria"),
           ("wind speed", "wave height"), ("tariffs", "consumer prices"),
           ("page load time", "conversion rate")]

THINKERS = [("Plato", "Aristotle"), ("Socrates", "Plato"), ("Kant", "Hegel"), ("Hume", "Kant"),
            ("Bach", "Mozart"), ("Monet", "Van Gogh"), ("Tolkien", "C.S. Lewis"),
            ("Darwin", "Mendel"), ("Newton", "Leibniz"), ("Nietzsche", "Freud"),
            ("Haydn", "Beethoven"), ("Cezanne", "Picasso"), ("Marx", "Lenin")]

PREDATORS = [("cats", "mice"), ("dogs", "cats"), ("dogs", "squirrels"), ("owls", "mice"),
             ("orcas", "seals"), ("wolves", "deer"), ("hawks", "rabbits"), ("crows", "hawks"),
             ("sharks", "fish"), ("foxes", "chickens"), ("ladybugs", "aphids"),
             ("snakes", "frogs"), ("lions", "zebras"), ("bats", "moths")]

ROLE2 = [("sender", "recipient"), ("buyer", "seller"), ("landlord", "tenant"), ("host", "guest"),
         ("employer", "employee"), ("driver", "rider"), ("teacher", "student"), ("agent", "client")]

NAMES = ["Maya", "Jordan", "Priya", "Tom", "Lena", "Omar", "Sofia", "Ben", "Aiko", "Diego",
         "Hannah", "Raj", "Chloe", "Marcus", "Ines", "Kofi"]

HOURS = ["9am", "noon", "3pm", "8 pm", "midnight", "6:30 am", "10 in the morning",
         "5 in the evening", "7:15 am"]
AMTS = ["50", "100", "200", "250", "500", "1,000", "20", "75", "2,500", "40"]
NUM_SMALL = ["3", "5", "10", "12", "20", "25", "50", "100", "2.5", "1.5", "7", "15", "40",
             "30", "8", "60", "4"]

PAIRED_SLOTS = {"HOUR": HOURS, "AMT": AMTS, "N": NUM_SMALL,
                "SERVER": ["nginx", "Apache", "Caddy", "Traefik"], "DISH": DISHES}

ASYM = [
    # ----------------------------------------------------------------- units
    {"pairs": UNITS, "frames": [
        "how do I convert {a} to {b}", "what's the formula to convert {a} to {b}",
        "{a} to {b} conversion formula", "how do you go from {a} to {b}",
        "how do I get {b} from {a}", "what's the conversion from {a} into {b}",
        "how do I change a measurement in {a} into {b}",
        "formula for turning {a} into {b}"]},
    {"pairs": UNITS, "frames": [
        "how many {b} is {N} {a}", "convert {N} {a} to {b}", "what is {N} {a} in {b}",
        "{N} {a} in {b}", "{N} {a} equals how many {b}", "what's {N} {a} converted to {b}",
        "if I have {N} {a}, how many {b} is that"]},
    # ------------------------------------------------------------ currencies
    {"choose": CURRENCIES, "frames": [
        "what's the exchange rate from {a} to {b}", "{a} to {b} exchange rate today",
        "what is today's {a} to {b} rate", "current conversion rate from {a} into {b}",
        "how much are {a} worth in {b} right now"]},
    {"choose": CURRENCIES, "frames": [
        "how much is {AMT} {a} in {b}", "convert {AMT} {a} to {b}", "what's {AMT} {a} in {b}",
        "how many {b} will I get for {AMT} {a}", "{AMT} {a} to {b}",
        "if I exchange {AMT} {a}, how many {b} do I get"]},
    {"choose": CURRENCIES, "frames": [
        "where's the cheapest place to exchange {a} for {b}",
        "best place to change {a} into {b} with low fees",
        "where should I swap my {a} for {b} to get a good rate",
        "cheapest way to turn my {a} into {b}"]},
    # ----------------------------------------------------------- file formats
    {"choose_group": FMT_GROUPS, "frames": [
        "how do I convert a {a} file to {b}", "how to convert {a} to {b}",
        "turn a {a} into a {b}", "how can I save a {a} as a {b}",
        "how do I get a {b} version of my {a} file", "change a {a} file into a {b} file",
        "converting {a} files to {b}, how"]},
    {"choose_group": FMT_GROUPS, "frames": [
        "free {a} to {b} converter", "is there a free tool to convert {a} files to {b}",
        "free app that converts {a} into {b}", "any free {a}-to-{b} converter you recommend"]},
    {"choose_group": FMT_GROUPS, "frames": [
        "how do I convert {a} to {b} on {OS}", "on {OS}, how can I turn a {a} into a {b}",
        "{a} to {b} conversion on {OS}", "what's the way to get a {b} from a {a} on {OS}"]},
    # -------------------------------------------------------------- languages
    {"choose": HUMAN_LANGS, "frames": [
        "how do I translate a document from {a} to {b}",
        "what's the best way to get a document translated from {a} into {b}",
        "translating a document from {a} to {b}, how",
        "I need a document in {a} turned into {b}, how do I get it translated"]},
    {"choose": HUMAN_LANGS, "frames": [
        "how much does it cost to have a contract translated from {a} into {b}",
        "price for translating a contract from {a} to {b}",
        "what do translators charge for {a} to {b} contract translation",
        "cost to get a contract in {a} translated into {b}"]},
    {"choose": HUMAN_LANGS, "frames": [
        "how hard is it for a native {a} speaker to learn {b}",
        "is {b} difficult to learn if your first language is {a}",
        "I speak {a} natively, how hard will {b} be for me",
        "how difficult is {b} for {a} speakers",
        "as a native {a} speaker, how tough is learning {b}"]},
    {"choose": HUMAN_LANGS, "frames": [
        "tips for {a} speakers learning {b}",
        "what advice do you have for a native {a} speaker learning {b}",
        "I'm a native {a} speaker starting {b}, any tips",
        "how should a {a} speaker approach learning {b}"]},
    {"choose": HUMAN_LANGS, "frames": [
        "what mistakes do {a} speakers make when learning {b}",
        "common errors {a} speakers make in {b}",
        "typical mistakes native {a} speakers make when speaking {b}"]},
    # ---------------------------------------------------------------- travel
    {"choose": "CITY", "frames": [
        "cheapest flights from {a} to {b} in {MONTH}", "cheap flights {a} to {b} in {MONTH}",
        "flights to {b} from {a} in {MONTH}, what's the cheapest option",
        "what's the lowest fare from {a} to {b} in {MONTH}",
        "I'm flying out of {a} to {b} in {MONTH}, what's the cheapest fare",
        "lowest price for a {a} to {b} flight in {MONTH}"]},
    {"choose": "CITY", "frames": [
        "what time is the first train from {a} to {b} on weekdays",
        "first train to {b} leaving {a} on a weekday, what time",
        "on weekdays, when does the earliest train from {a} to {b} depart",
        "weekday schedule: first departure from {a} heading to {b}"]},
    {"choose": "CITY", "frames": [
        "when does the last bus from {a} to {b} leave",
        "last bus to {b} departing {a}, what time",
        "what's the latest bus I can catch from {a} to {b}",
        "final bus of the day from {a} going to {b}, when is it"]},
    {"choose": "CITY", "frames": [
        "how much is a one-way train ticket from {a} to {b}",
        "one-way ticket to {b} from {a} by train, price",
        "price of a single train ticket {a} to {b}",
        "what does a one-way rail fare from {a} to {b} cost"]},
    {"choose": "COUNTRY", "frames": [
        "does a citizen of {a} need a visa to visit {b}",
        "do people with a passport from {a} need a visa for {b}",
        "visa requirements for citizens of {a} traveling to {b}",
        "I have a passport from {a}, can I enter {b} visa-free",
        "can someone from {a} travel to {b} without a visa"]},
    {"choose": "COUNTRY", "frames": [
        "how much does it cost to ship a package from {a} to {b}",
        "shipping a parcel to {b} from {a}, how much does it cost",
        "what's the price to mail a package from {a} to {b}",
        "cost of sending a box from {a} to {b}"]},
    {"choose": "COUNTRY", "frames": [
        "what customs forms do I need to send a gift from {a} to {b}",
        "sending a gift to {b} from {a}, which customs forms are needed",
        "customs paperwork for mailing a present from {a} to {b}"]},
    {"choose": "CITY", "frames": [
        "what time is it in {b} when it's {HOUR} in {a}",
        "if it's {HOUR} in {a}, what time is it in {b}",
        "{HOUR} in {a} is what time in {b}", "convert {HOUR} {a} time to {b} time",
        "when it's {HOUR} in {a}, what's the time in {b}"]},
    # ---------------------------------------------------------------- money
    {"choose": ACCOUNTS, "frames": [
        "how do I move money from my {a} to my {b}",
        "how do I transfer funds from my {a} to my {b}",
        "how can I move money into my {b} from my {a}",
        "what's the way to send money from my {a} over to my {b}",
        "moving cash from my {a} into my {b}, how"]},
    {"choose": ACCOUNTS, "frames": [
        "how long does a transfer from my {a} to my {b} take",
        "how long until money moved from my {a} shows up in my {b}",
        "when will a transfer to my {b} from my {a} arrive",
        "transfer time from {a} to {b}?"]},
    {"choose": ACCOUNTS, "frames": [
        "is there a fee to transfer money from my {a} to my {b}",
        "do I pay a fee when moving money from my {a} into my {b}",
        "fees for transfers to my {b} from my {a}"]},
    {"choose": RETIREMENT, "frames": [
        "can I roll over my {a} into a {b}", "is it possible to roll my {a} over to a {b}",
        "can I move my {a} money into a {b}", "can a {b} accept a rollover from a {a}",
        "rolling a {a} into a {b}, is that allowed"]},
    {"choose": RETIREMENT, "frames": [
        "what are the tax consequences of moving my {a} into a {b}",
        "will I owe taxes if I roll my {a} into a {b}",
        "is rolling a {a} into a {b} taxable",
        "taxes on a rollover from a {a} to a {b}"]},
    {"choose": WALLETS, "frames": [
        "how do I transfer my balance from {a} to {b}",
        "move funds from {a} over to {b}, how",
        "how can I cash out from {a} into {b}",
        "how do I get money out of {a} and into {b}"]},
    # ------------------------------------------------------------ legal / HR
    {"pairs": ROLES, "frames": [
        "can a {a} sue a {b} for breach of contract",
        "is it possible for a {a} to sue a {b} for breach of contract",
        "can a {b} be sued by a {a} for breach of contract",
        "can a {a} take a {b} to court over a breach of contract"]},
    {"pairs": ROLES, "frames": [
        "can a {a} take a {b} to small claims court",
        "can a {b} be taken to small claims court by a {a}",
        "is small claims court an option for a {a} suing a {b}"]},
    {"pairs": ROLES, "frames": [
        "does the {a} owe the {b} anything if the contract is cancelled early",
        "if the contract is cancelled early, does the {a} owe the {b} money",
        "can the {b} collect money from the {a} when the contract is cancelled early",
        "early cancellation of the contract: does the {a} have to pay the {b}"]},
    {"pairs": ROLES, "frames": [
        "what notice does a {a} have to give a {b} before ending the agreement",
        "how much notice must a {a} give a {b} to end the agreement",
        "before ending the agreement, what notice is a {b} owed by a {a}"]},
    # ------------------------------------------------------------- switching
    {"choose_group": MIGRATIONS, "frames": [
        "how do I migrate from {a} to {b}", "what's the best way to switch from {a} to {b}",
        "moving from {a} to {b}, where do I start", "steps to move over to {b} from {a}",
        "how do I switch over to {b} from {a}", "I'm leaving {a} for {b}, how do I migrate"]},
    {"choose_group": MIGRATIONS, "frames": [
        "how do I transfer my data from {a} to {b}",
        "how can I move all my data over to {b} from {a}",
        "copy everything from {a} to {b}, how",
        "getting my stuff from {a} into {b}, how"]},
    {"choose_group": MIGRATIONS, "frames": [
        "what will I miss after switching from {a} to {b}",
        "what do people regret after switching from {a} to {b}",
        "downsides of moving to {b} from {a}"]},
    {"choose": CARRIERS, "frames": [
        "how do I port my number from {a} to {b}",
        "how do I transfer my phone number from {a} to {b}",
        "switching carriers from {a} to {b}, how do I keep my number",
        "can I bring my number over to {b} from {a}"]},
    {"choose": TIERS, "frames": [
        "how do I switch my {STREAM} plan from {a} to {b}",
        "changing from {a} to {b} on {STREAM}, how",
        "how do I go from the {a} plan to the {b} plan on {STREAM}",
        "how can I move to {b} from {a} on {STREAM}"]},
    {"choose": SCHOOLS, "frames": [
        "can I transfer credits from {a} to {b}",
        "will my credits from {a} transfer to {b}",
        "do credits earned at {a} count toward a degree at {b}",
        "can {b} accept transfer credits from {a}"]},
    {"choose": PHARMACIES, "frames": [
        "how do I transfer my prescriptions from {a} to {b}",
        "can I move my prescriptions over to {b} from {a}",
        "switching pharmacies from {a} to {b}, how do my refills move",
        "getting my prescriptions moved from {a} to {b}, how"]},
    # ----------------------------------------------------------- programming
    {"choose": BRANCHES, "frames": [
        "how do I merge {a} into {b}", "git merge {a} into {b}, how",
        "how do I get the changes from {a} into {b}",
        "how to merge the {a} branch into the {b} branch",
        "bring {a} into {b} with git merge"]},
    {"choose": BRANCHES, "frames": [
        "how do I rebase {a} onto {b}", "git rebase {a} on top of {b}",
        "how can I replay {a}'s commits on top of {b}"]},
    {"pairs": TYPE_PAIRS, "frames": [
        "how do I convert a {a} to a {b} in {LANG}", "{LANG}: how to convert {a} to {b}",
        "how can I turn a {a} into a {b} in {LANG}", "in {LANG}, how do I get a {b} from a {a}",
        "what's the {LANG} way to convert a {a} to a {b}", "{a} to {b} in {LANG}"]},
    {"pairs": LOCATIONS, "frames": [
        "how do I copy files from {a} to {b}", "copying files from {a} to {b}, what's the command",
        "how can I copy files over to {b} from {a}",
        "what's the fastest way to get files from {a} onto {b}"]},
    {"pairs": REDIRECTS, "frames": [
        "how do I redirect {a} to {b} in {SERVER}", "{SERVER} config to redirect {a} to {b}",
        "set up a {SERVER} redirect from {a} to {b}",
        "how do I send {a} traffic to {b} with {SERVER}"]},
    {"pairs": MAIL_PAIRS, "frames": [
        "how do I forward emails from my {a} account to my {b} account",
        "how can I automatically forward my {a} mail to my {b} inbox",
        "set up auto-forwarding from my {a} email to my {b} email",
        "how do I get my {a} emails sent to my {b} account automatically"]},
    {"pairs": PHONES, "frames": [
        "how do I forward calls from my {a} to my {b}",
        "set up call forwarding from my {a} to my {b}",
        "how do I make calls to my {a} ring on my {b}"]},
    # --------------------------------------------------------------- cooking
    {"pairs": SUBS, "frames": [
        "can I use {a} instead of {b} in {DISH}", "can I replace {b} with {a} in {DISH}",
        "is it OK to swap {b} out for {a} in {DISH}",
        "will {DISH} work if I use {a} in place of {b}",
        "can {a} stand in for {b} in {DISH}"]},
    {"pairs": SUBS, "frames": [
        "how much {a} do I use to replace {b}",
        "what's the ratio when substituting {a} in place of {b}",
        "if a recipe calls for {b} and I only have {a}, how much should I use"]},
    # --------------------------------------------------------------- science
    {"pairs": TRANSFORM, "fixed": True, "frames": [
        "can {a} turn into {b}", "is it possible for {a} to become {b}",
        "can {b} form from {a}", "is it possible to get {b} from {a}"]},
    {"pairs": TRANSFORM, "fixed": True, "frames": [
        "how does {a} turn into {b}", "how does {a} become {b}",
        "what's the process by which {a} changes into {b}", "how is {b} formed from {a}"]},
    {"pairs": EFFECTS, "fixed": True, "frames": [
        "how does {a} affect {b}", "what effect does {a} have on {b}",
        "how is {b} affected by {a}", "what impact does {a} have on {b}",
        "in what way does {a} influence {b}"]},
    {"pairs": THINKERS, "fixed": True, "frames": [
        "how did {a} influence {b}", "what influence did {a} have on {b}",
        "in what ways was {b} influenced by {a}", "how was {b} shaped by {a}"]},
    {"pairs": PREDATORS, "fixed": True, "frames": [
        "why do {a} chase {b}", "what makes {a} chase {b}", "why are {b} chased by {a}",
        "what's the reason {a} go after {b}"]},
    # ------------------------------------------------ roles and who-did-what
    {"pairs": ROLE2, "frames": [
        "what information can the {a} see about the {b}",
        "what can the {a} find out about the {b}",
        "which details about the {b} are visible to the {a}"]},
    {"pairs": ROLE2, "frames": [
        "how does the {a} leave a review for the {b} on {APP}",
        "where can the {a} review the {b} on {APP}",
        "on {APP}, how can a {b} be reviewed by the {a}"]},
    {"pairs": [("sender", "recipient")], "frames": [
        "can the {a} see if the {b} opened the email",
        "is the {a} able to tell whether the {b} opened the email",
        "does the {a} find out when the {b} opens the email"]},
    {"pairs": [("sender", "recipient")], "frames": [
        "can the {a} of a bank transfer cancel it without asking the {b}",
        "is the {a} allowed to reverse a bank transfer without the {b}'s consent",
        "without the {b} agreeing, can the {a} undo a bank transfer"]},
    {"choose": NAMES, "frames": [
        "is {a} {b}'s manager", "does {b} report to {a}", "is {b} a direct report of {a}",
        "does {a} manage {b}"]},
    {"choose": NAMES, "frames": [
        "did {a} approve {b}'s expense report", "was {b}'s expense report approved by {a}",
        "has {a} signed off on {b}'s expense report"]},
    {"choose": NAMES, "frames": [
        "how much does {a} owe {b} after the trip", "after the trip, how much money does {a} owe {b}",
        "what does {a} still have to pay {b} for the trip"]},
    # ---------------------------------------------------------------- sports
    {"choose": "TEAM", "frames": [
        "did the {a} beat the {b} last night", "did the {b} lose to the {a} last night",
        "last night, did the {a} win against the {b}",
        "was last night a win for the {a} over the {b}"]},
    {"choose": "TEAM", "frames": [
        "how many times have the {a} beaten the {b}",
        "how many times have the {b} lost to the {a}",
        "how many wins do the {a} have over the {b}",
        "all-time wins by the {a} against the {b}"]},
    # ------------------------------------------------------------------ math
    {"nums": (3, 99), "frames": [
        "what is {a} minus {b}", "subtract {b} from {a}", "what's {a} take away {b}",
        "{a} - {b}", "what do you get when you subtract {b} from {a}"]},
    {"nums": (2, 144), "frames": [
        "what is {a} divided by {b}", "divide {a} by {b}", "{a} / {b}",
        "how many times does {b} go into {a}", "what's {a} over {b}"]},
    {"nums": (2, 12), "frames": [
        "what is {a} to the power of {b}", "{a} raised to the power {b}", "{a}^{b}",
        "{a} raised to the power of {b}"]},
    {"nums": (2, 120), "frames": [
        "is {a} divisible by {b}", "can {a} be divided evenly by {b}",
        "does {b} divide {a} evenly", "is {a} a multiple of {b}", "is {b} a factor of {a}"]},
    {"nums": (3, 99), "frames": [
        "what is {a} mod {b}", "what's the remainder when {a} is divided by {b}",
        "{a} % {b}", "{a} modulo {b}"]},
    {"nums": (10, 500), "frames": [
        "what's the percent change from {a} to {b}",
        "if something goes from {a} to {b}, what's the percent change",
        "percentage change going from {a} to {b}"]},
]

CONCEPT_PAIRS = [
    ("a Roth IRA", "a traditional IRA"), ("an HMO", "a PPO"), ("TCP", "UDP"),
    ("a virus", "a bacterium"), ("baking soda", "baking powder"), ("a credit union", "a bank"),
    ("weather", "climate"), ("latitude", "longitude"), ("mitosis", "meiosis"),
    ("a W-2 employee", "a 1099 contractor"), ("term life insurance", "whole life insurance"),
    ("git merge", "git rebase"), ("stocks", "bonds"), ("crocodiles", "alligators"),
    ("an LLC", "an S corp"), ("a debit card", "a credit card"), ("a will", "a living trust"),
    ("copyright", "trademark"), ("an MRI", "a CT scan"), ("a cold", "the flu"),
    ("a heat pump", "a furnace"), ("Wi-Fi 6", "Wi-Fi 5"), ("RAM", "storage"),
    ("a deductible", "a copay"), ("APR", "APY"), ("a misdemeanor", "a felony"),
    ("an annuity", "a pension"), ("a mortgage broker", "a loan officer"),
    ("let", "const"), ("a process", "a thread"), ("an array", "a linked list"),
    ("a sprain", "a strain"), ("a hurricane", "a typhoon"), ("a psychologist", "a psychiatrist"),
    ("a GFCI outlet", "an AFCI breaker"), ("latex paint", "oil-based paint"),
    ("a subpoena", "a summons"), ("gross income", "net income"), ("a 5G plan", "an LTE plan"),
    ("frogs", "toads"), ("a tornado", "a hurricane"), ("a sole proprietorship", "a partnership"),
    ("an FSA", "an HSA"), ("a prepaid plan", "a postpaid plan"), ("a lease", "a rental agreement"),
    ("SQL", "NoSQL"), ("a comet", "an asteroid"), ("a tariff", "a quota"),
    ("a fixed-rate mortgage", "an adjustable-rate mortgage"), ("a kayak", "a canoe"),
    ("a serrated knife", "a chef's knife"), ("kosher salt", "table salt"),
    ("a dividend", "an interest payment"), ("a power of attorney", "a guardianship")]

SPECIES = [("wolves", "dogs"), ("horses", "zebras"), ("lions", "tigers"), ("dolphins", "whales"),
           ("crocodiles", "alligators"), ("frogs", "toads"), ("rabbits", "hares"),
           ("bees", "wasps"), ("moths", "butterflies"), ("llamas", "alpacas"),
           ("turtles", "tortoises"), ("seals", "sea lions"), ("ravens", "crows"),
           ("leopards", "jaguars")]

COMPAT_DEVICES = ["Nimbus Buds", "Zentro S5", "Orbit Tab 10", "Pulsewave watch", "Arcadia TV",
                  "Lumo Home hub", "Vantra router", "Quill e-reader", "Kestrel X14",
                  "Tessera 3", "Brio soundbar", "Halo dock"]

INTERACT = ["ibuprofen", "acetaminophen", "aspirin", "naproxen", "loratadine", "cetirizine",
            "melatonin", "omeprazole", "diphenhydramine", "alcohol", "caffeine",
            "grapefruit juice", "St. John's wort", "magnesium", "vitamin D", "fish oil"]

CLEANERS = ["bleach", "vinegar", "ammonia", "baking soda", "hydrogen peroxide",
            "rubbing alcohol", "dish soap", "borax", "lemon juice"]

PIPES = [("copper wire", "aluminum wire"), ("PEX", "copper pipe"), ("PVC", "ABS pipe"),
         ("galvanized pipe", "copper pipe"), ("cast iron pipe", "PVC"),
         ("a 15-amp outlet", "a 20-amp circuit")]

SYM = [
    {"choose": "CITY", "frames": [
        "what's the distance between {a} and {b}", "how far apart are {a} and {b}",
        "how many miles between {a} and {b}", "distance between {a} and {b} in miles"]},
    {"choose": "CITY", "frames": [
        "what's the time difference between {a} and {b}", "how many hours apart are {a} and {b}",
        "time zone difference between {a} and {b}"]},
    {"choose": "COUNTRY", "frames": [
        "do {a} and {b} share a border", "are {a} and {b} neighbors",
        "is there a land border between {a} and {b}"]},
    {"choose": COMPAT_DEVICES, "frames": [
        "are the {a} and the {b} compatible", "do the {a} and the {b} work together",
        "is the {a} compatible with the {b}"]},
    {"choose": INTERACT, "frames": [
        "can I take {a} and {b} together", "is it safe to take {a} with {b}",
        "do {a} and {b} interact", "is it OK to combine {a} and {b}",
        "any interaction between {a} and {b}"]},
    {"pairs": CONCEPT_PAIRS, "frames": [
        "what's the difference between {a} and {b}", "how is {a} different from {b}",
        "{a} vs {b}, what's the difference", "how do {a} and {b} differ",
        "explain the difference between {a} and {b}"]},
    {"pairs": CONCEPT_PAIRS, "frames": [
        "what do {a} and {b} have in common", "what are the similarities between {a} and {b}",
        "how are {a} and {b} alike"]},
    {"pairs": SPECIES, "frames": [
        "are {a} and {b} related", "how closely related are {a} and {b}",
        "are {a} and {b} in the same family"]},
    {"choose": CLEANERS, "frames": [
        "is it safe to mix {a} and {b}", "can I safely mix {a} with {b}",
        "is mixing {a} and {b} safe"]},
    {"choose": CLEANERS, "frames": [
        "what happens if you mix {a} and {b}", "what happens when {a} is mixed with {b}",
        "what happens if I combine {a} with {b}"]},
    {"choose": "TEAM", "frames": [
        "who won the last game between the {a} and the {b}",
        "in the most recent {a}-{b} game, who won", "last {a} vs {b} matchup, who won"]},
    {"choose": "TEAM", "frames": [
        "when do the {a} play the {b} next", "when is the next {a} vs {b} game",
        "next game between the {a} and the {b}, when is it"]},
    {"pairs": PIPES, "frames": [
        "can I connect {a} to {b}", "is it OK to join {a} and {b}",
        "can {a} be connected to {b}"]},
    {"nums": (2, 99), "frames": [
        "what is {a} plus {b}", "{a} + {b}", "add {a} and {b}", "what's the sum of {a} and {b}"]},
    {"nums": (2, 99), "frames": [
        "what is {a} times {b}", "{a} x {b}", "multiply {a} by {b}",
        "what's {a} multiplied by {b}", "product of {a} and {b}"]},
    {"nums": (4, 200), "frames": [
        "what's the greatest common divisor of {a} and {b}", "GCD of {a} and {b}",
        "what is the highest common factor of {a} and {b}"]},
    {"nums": (2, 60), "frames": [
        "least common multiple of {a} and {b}", "what's the LCM of {a} and {b}",
        "lowest common multiple of {a} and {b}"]},
    {"nums": (2, 500), "frames": [
        "what's the average of {a} and {b}", "mean of {a} and {b}",
        "what is the midpoint between {a} and {b}"]},
    {"choose": ["Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"],
     "frames": [
        "how far apart are {a} and {b}", "what's the distance between {a} and {b}",
        "average distance between {a} and {b}"]},
    {"choose": "STATE", "frames": [
        "how long is the drive between {a} and {b}", "driving time between {a} and {b}"]},
]
