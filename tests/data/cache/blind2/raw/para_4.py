# Hand-written paraphrase pairs (same_answer = true), part 4.
CATEGORY = "paraphrase"
DATA = r'''
@education_admin
How do I enrol in classes for next semester at Stoneleigh University? ~~ What's the process for signing up to modules for the coming term at Stoneleigh?
When is the deadline to pay tuition fees? ~~ By what date do my university fees need to be paid?
How do I get a copy of my transcript? ~~ I need an official record of my grades, how do I request it?
How do I apply for an extension on my assignment? ~~ I can't finish my coursework on time, how can I get more time?
How do I defer my place at university? ~~ I've been accepted but want to start a year later, is that possible and how?
How do I reset my student portal password? ~~ cant log into the student portal, forgot my password
Where can I see my exam timetable? ~~ How do I find out when and where my exams are?
How do I apply for a student loan? ~~ what do i need to do to get student finance
How do I change my course? ~~ I want to switch to a different degree program, what's the process?
How do I get a student ID card? ~~ I'm a new student, where do I pick up my university card?
What happens if I fail an exam? ~~ If I don't pass one of my exams, what are my options?
How do I appeal a grade? ~~ I think my mark is wrong, how can I challenge it?
How do I withdraw from a module? ~~ I want to drop one of my classes, how do I do that?
Where do I get a letter confirming I'm a student? ~~ I need proof of enrolment for a bank, how do I get one?
How do I book a meeting with my academic advisor? ~~ What's the way to set up an appointment with my personal tutor?
When are results released? ~~ On what date will we get our final marks?
How do I apply for accommodation on campus? ~~ I want to live in halls, how do I apply for a room?
Can I pay my tuition in instalments? ~~ Is it possible to split my fees into several payments?
How do I register for graduation? ~~ What do I need to do to sign up for the graduation ceremony?
How do I apply for a scholarship? ~~ Where can I find and apply for funding awards?
How do I report mitigating circumstances? ~~ Something serious affected my exams, how do I let the university know so it's taken into account?
How do I get access to the library after hours? ~~ Can I use the library late at night, and how do I get in?
How do I take a leave of absence? ~~ I need to pause my studies for a semester, how do I arrange that?
How do I enrol my child in a new school? ~~ We've moved area, what's the process to get my son a place at a local school?
What is the school term calendar for this year? ~~ When do the school holidays and terms start and end this year?
How do I report my child's absence from school? ~~ My daughter is sick today, how do I tell the school she won't be in?
How do I apply for free school meals? ~~ Are we eligible for free lunches at school, and how do we apply?
How do I submit my assignment online? ~~ where do i upload my coursework
What is the attendance requirement for my course? ~~ How many classes am I allowed to miss?
How do I get my degree certificate reissued? ~~ I lost my diploma, can I get a replacement?
How do I get disability support at university? ~~ I have dyslexia, how do I arrange extra support for my studies?
How do I check my plagiarism report? ~~ where can i see the similarity score for my essay
How do I apply for a part-time course? ~~ What's the application process for studying part time?
How do I transfer credits from another university? ~~ I studied somewhere else before, can those credits count towards my degree here?
How do I join a student society? ~~ I want to sign up for one of the clubs, how do I join?
When does registration for the spring term open? ~~ What date can we start signing up for spring classes?
How do I request a reference from a lecturer? ~~ I need an academic reference for a job, how do I ask my lecturer?
How do I get a council tax exemption certificate as a student? ~~ My council wants proof I'm a full-time student so I don't pay council tax, how do I get it?

@cooking
How long should I boil an egg for a runny yolk? ~~ For a soft-boiled egg with a gooey centre, how many minutes in the pan?
What can I use instead of buttermilk? ~~ My recipe needs buttermilk and I don't have any, what's a good substitute?
How do I stop pasta from sticking together? ~~ my spaghetti always clumps up, what am i doing wrong
How long do I rest a steak after cooking? ~~ After taking steak off the heat, how many minutes should it sit before cutting?
What temperature should chicken be cooked to? ~~ What internal temp means chicken is safe to eat?
How do I make rice not mushy? ~~ My rice always ends up soggy and sticky, how do I get fluffy grains?
Can I freeze cooked rice? ~~ Is it safe to put leftover rice in the freezer?
How do I know when my bread is done baking? ~~ How can I tell a loaf is fully baked inside?
How do I caramelise onions? ~~ what's the method for getting onions sweet and golden brown
How long does cooked chicken last in the fridge? ~~ For how many days can I keep leftover chicken refrigerated?
Why did my cake sink in the middle? ~~ My sponge collapsed in the centre after baking, what went wrong?
How do I make a roux? ~~ what's the way to make the flour and butter base for a sauce
Can I substitute baking soda for baking powder? ~~ I'm out of baking powder, will bicarbonate of soda work instead?
How do I sharpen a kitchen knife? ~~ My knives are blunt, how do I get a good edge back on them?
How do I thicken a sauce without flour? ~~ My sauce is too runny and I can't use flour, how else can I make it thicker?
How do I cook quinoa? ~~ whats the water ratio and time for quinoa
How long do I roast potatoes for? ~~ How much time in the oven do roast potatoes need to get crispy?
How do I know if an egg is still fresh? ~~ Is there a way to test whether my eggs have gone off?
How do I season a cast iron pan? ~~ I bought a cast-iron skillet, how do I build up the non-stick coating on it?
Why is my bread dough not rising? ~~ I left my dough for hours and it hasn't puffed up, why?
How much yeast is in one packet? ~~ A sachet of dried yeast holds how many grams?
How do I defrost chicken quickly and safely? ~~ I forgot to take the chicken out of the freezer, what's a safe fast way to thaw it?
What's the difference between baking soda and baking powder? ~~ how are bicarb and baking powder different
How do I poach an egg? ~~ What's the technique for cooking an egg in simmering water?
How do I make my cookies chewy instead of crispy? ~~ My biscuits always come out crunchy, how do I get them soft and chewy?
Can I reheat rice? ~~ Is it safe to warm up leftover rice the next day?
How do I stop my avocado turning brown? ~~ How do I keep a cut avocado green?
How do I cook a jacket potato in the microwave? ~~ Fastest way to do a baked potato using the microwave?
What's a good vegetarian substitute for mince in lasagne? ~~ I want to make lasagna without meat, what can I use in place of ground beef?
How long can I keep homemade soup in the fridge? ~~ For how many days is soup I made myself OK refrigerated?
How do I stop my cheese sauce going grainy? ~~ Why does my cheese sauce turn lumpy and how do I prevent it?
What's the best oil for deep frying? ~~ Which cooking oil should I use when deep-frying?
How do I make whipped cream by hand? ~~ I don't have a mixer, how do I whip cream with just a whisk?
How do I cook dried beans without soaking? ~~ I forgot to soak my beans overnight, can I still cook them and how?
How do I get crispy skin on salmon? ~~ My salmon skin always goes soggy, how do I make it crisp?
How do I fix a sauce that's too salty? ~~ I put too much salt in my sauce, how can I rescue it?
What does "fold in" mean in baking? ~~ A recipe tells me to fold the flour in. What does that actually mean?
How do I stop my pastry shrinking in the oven? ~~ My pie crust keeps shrinking when I bake it blind, how do I prevent that?

@general_knowledge
What is the capital of Australia? ~~ Which city is Australia's capital?
How many bones are in the adult human body? ~~ A grown-up person's skeleton has how many bones?
Who wrote Pride and Prejudice? ~~ Which author is responsible for the novel Pride and Prejudice?
Why is the sky blue? ~~ what makes the sky look blue during the day
How far is the Moon from Earth? ~~ What's the distance between the Earth and the Moon?
What is the boiling point of water at sea level? ~~ At normal sea-level pressure, at what temperature does water boil?
How many continents are there? ~~ What's the number of continents in the world?
What causes the seasons? ~~ why do we have summer and winter
Who painted the Mona Lisa? ~~ Which artist created the Mona Lisa?
What is the largest ocean? ~~ Which ocean covers the most area on Earth?
How long does light from the Sun take to reach Earth? ~~ How many minutes does sunlight need to travel to us?
What is photosynthesis? ~~ can you explain how plants make food from sunlight
What is the tallest mountain in the world? ~~ Which mountain has the highest peak above sea level?
How many players are on a football team on the pitch? ~~ In soccer, how many players does each side have on the field?
What language is spoken in Brazil? ~~ What do people in Brazil speak?
When did the First World War start? ~~ In what year did WW1 begin?
What is the chemical symbol for gold? ~~ Gold's symbol on the periodic table is what?
How many hearts does an octopus have? ~~ What number of hearts do octopuses have?
What is the speed of light? ~~ How fast does light travel?
Why do we have leap years? ~~ what's the reason for adding an extra day to february every few years
What is the longest river in Africa? ~~ Which river in Africa is the longest?
What is the smallest country in the world? ~~ Which nation has the least land area of any country?
What's the difference between weather and climate? ~~ how is climate different from weather
Who invented the telephone? ~~ Which person is credited with inventing the phone?
What is the freezing point of water in Fahrenheit? ~~ At how many degrees F does water freeze?
How many days does it take the Earth to orbit the Sun? ~~ How long is one full trip of the Earth around the Sun, in days?
What is the currency of Japan? ~~ What money do they use in Japan?
What are the three primary colours of light? ~~ Which three colours of light mix to make all others?
What does DNA stand for? ~~ what is the full name of dna
How many strings does a standard violin have? ~~ A normal violin has how many strings?
Why do cats purr? ~~ What's the reason cats make that purring sound?
What is the hardest natural substance? ~~ Which naturally occurring material is the hardest?
How many time zones does Russia have? ~~ Russia spans how many time zones?
What is the largest planet in our solar system? ~~ Which planet in the solar system is the biggest?
Who was the first person to walk on the Moon? ~~ Which astronaut first set foot on the lunar surface?
What is the population of Canada? ~~ Roughly how many people live in Canada?
Why does ice float on water? ~~ how come ice doesnt sink in water
What is the main ingredient in guacamole? ~~ Guacamole is mostly made from what?

@programming
How do I reverse a list in Python? ~~ What's the way to flip the order of elements in a Python list?
How do I check if a key exists in a Python dictionary? ~~ In Python, how can I tell whether a dict contains a particular key?
How do I undo my last git commit? ~~ I committed something by mistake, how do I take back the most recent commit in git?
What is the difference between let and var in JavaScript? ~~ In JS, how does declaring with var differ from let?
How do I read a file line by line in Python? ~~ what's the python way to loop over each line of a text file
How do I centre a div horizontally in CSS? ~~ What CSS do I need to put a div in the middle of the page horizontally?
How do I remove duplicates from a list in Python? ~~ I have a Python list with repeated values, how do I get only the unique ones?
What does a 404 error mean? ~~ What is an HTTP 404 status code telling me?
How do I install a specific version of a package with pip? ~~ Using pip, how can I install an exact version of a library?
How do I make an HTTP request in JavaScript? ~~ What's the way to call a REST API from JS in the browser?
How do I sort a list of dictionaries by a value in Python? ~~ I have a list of dicts and want them ordered by one of the keys, how?
What is a null pointer exception? ~~ can someone explain what it means when I get a NullPointerException
How do I create a new branch in git? ~~ What command makes a new git branch?
How do I convert a list to a comma-separated string in Python? ~~ In Python, how do I join list items into one string separated by commas?
How do I exit vim? ~~ i'm stuck in vim and can't get out, how do i quit
What is the difference between a process and a thread? ~~ How is a thread different from a process?
How do I get the current date in JavaScript? ~~ What's the JS code for today's date?
How do I resolve a merge conflict in git? ~~ Git says there's a conflict when merging, how do I fix it?
What is recursion? ~~ can you explain what a recursive function is
How do I find the length of a string in Java? ~~ In Java, how do I get how many characters a String has?
How do I run a Python script from the command line? ~~ What do I type in the terminal to execute a .py file?
What does the "this" keyword mean in JavaScript? ~~ How does `this` work in JS?
How do I handle exceptions in Python? ~~ What's the syntax for catching errors in Python code?
How do I select unique values in SQL? ~~ In a SQL query, how do I return only distinct rows?
How do I create a virtual environment in Python? ~~ What's the command to set up a venv for a Python project?
What is the difference between == and === in JavaScript? ~~ In JS, how does double equals differ from triple equals?
How do I delete a remote branch in git? ~~ What's the command to remove a branch from the origin repository?
How do I loop through an object's keys in JavaScript? ~~ What's the way to iterate over each property of a JS object?
How do I write a list comprehension in Python? ~~ what's the syntax for a one-line list comprehension in python
What is Big O notation? ~~ Can you explain what Big-O means when talking about algorithms?
How do I count rows in a SQL table? ~~ What's the query to get the number of records in a table?
How do I see which files changed in git? ~~ How can I list the files I've modified since my last commit?
How do I format a number to two decimal places in Python? ~~ In Python, how do I print a float rounded to 2 decimals?
What does "segmentation fault" mean? ~~ My C program crashes with a segfault, what does that error actually mean?
How do I add an element to an array in JavaScript? ~~ What's the way to append an item to a JS array?
How do I kill a process running on a port in Linux? ~~ Something is already using port 8080 on my Linux box, how do I stop it?
How do I parse JSON in Python? ~~ I've got a JSON string, how do I turn it into a Python object?
How do I make a column unique in PostgreSQL? ~~ In Postgres, how do I stop duplicate values being inserted into a column?

@personal_finance
How much should I have in an emergency fund? ~~ How many months of expenses is it sensible to keep aside for emergencies?
What is compound interest? ~~ can someone explain how interest on interest works
Should I pay off debt or save first? ~~ Is it better to clear my debts before putting money into savings?
How does a credit score work? ~~ What actually determines my credit rating?
How can I improve my credit score? ~~ What steps raise a low credit rating?
What is the 50/30/20 budget rule? ~~ Can you explain the budgeting method that splits income into needs, wants and savings percentages?
What's the difference between a Roth IRA and a traditional IRA? ~~ How does a Roth IRA differ from a regular traditional one?
How do index funds work? ~~ can you explain what an index fund is and how it makes money
Is it better to rent or buy a house? ~~ Should I buy a home or keep renting, which makes more financial sense?
How much should I save for retirement? ~~ What portion of my income ought to go into my pension?
What is an ISA? ~~ What exactly is an individual savings account?
How do I start investing with little money? ~~ I only have a small amount spare, how can I begin investing?
What is dollar-cost averaging? ~~ What does it mean to invest the same amount regularly regardless of price?
How do I make a budget? ~~ What's a simple way to set up a monthly budget?
What is a good debt-to-income ratio? ~~ What level of debt compared to income do lenders consider healthy?
How does a mortgage work? ~~ can you explain the basics of how home loans work
What is inflation and how does it affect my savings? ~~ How does rising prices eat into the money I have saved?
Should I consolidate my debts? ~~ Is it a good idea to combine my loans into one?
What is an annuity? ~~ What does buying an annuity with my pension mean?
How do I avoid lifestyle creep? ~~ As my salary goes up, how do I stop my spending rising with it?
What is the difference between stocks and bonds? ~~ How are shares different from bonds?
What happens to my pension if I change jobs? ~~ When I leave an employer, what becomes of the workplace pension I built up there?
How do I save for a house deposit? ~~ What's the best way to build up money for a down payment?
Is it worth paying off my mortgage early? ~~ Should I overpay my home loan to clear it sooner?
What is a credit utilisation ratio? ~~ What does the percentage of my credit limit that I'm using mean for my score?
How do I calculate my net worth? ~~ What's the way to work out how much I'm worth overall?
What are high-yield savings accounts? ~~ can you explain what a high interest savings account is
How does a balance transfer card help with debt? ~~ Why would moving my credit card balance to a 0% card help me pay it off?
What's the best way to pay off multiple credit cards? ~~ I have balances on several cards, which order should I pay them off in?
Should I use a financial advisor? ~~ Is it worth paying for a professional financial adviser?
What is an employer pension match? ~~ What does it mean when my company matches my retirement contributions?
How do I stop impulse spending? ~~ I keep buying things on a whim, how can I stop?
What is a sinking fund? ~~ What do people mean when they set aside money in a sinking fund?
How much life insurance do I need? ~~ How do I work out the right amount of life cover?
What is an expense ratio on a fund? ~~ What's the annual fee percentage that funds charge called and how does it work?
Can I retire early with index funds? ~~ Is it realistic to retire early by investing in index funds?
'''
