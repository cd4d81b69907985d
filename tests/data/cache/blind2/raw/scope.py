# Hand-written scope_change look-alikes (same_answer = false): this vs all, mine vs
# someone else's, adult vs child, personal vs business, domestic vs international, qualifiers.
CATEGORY = "scope_change"
DATA = r'''
@retail_banking
How do I close my Quillfield account? ~~ How do I close my late mother's Quillfield account?
How do I cancel this direct debit? ~~ How do I cancel all my direct debits at once?
What's the daily transfer limit for personal accounts? ~~ What's the daily transfer limit for business accounts?
Can I open a current account online? ~~ Can I open a current account for my 12-year-old online?
How do I download my statement for March? ~~ How do I download all my statements for the year?
What are the fees for domestic transfers? ~~ What are the fees for international transfers?
How do I change my address on my account? ~~ How do I change my address on my joint account with my ex?
Can I get a replacement card sent to my home? ~~ Can I get a replacement card sent to a branch?

@cards_payments
How do I freeze my card? ~~ How do I freeze my son's card on my account?
Why was this payment declined? ~~ Why are all my payments being declined?
What's the cash advance fee in the UK? ~~ What's the cash advance fee abroad?
How do I dispute one transaction? ~~ How do I dispute every transaction from one merchant?
Can I increase my own credit limit? ~~ Can I increase the limit on my additional cardholder's card?
What's the APR on purchases? ~~ What's the APR on cash withdrawals?
How do I cancel my card? ~~ How do I cancel my card and close the whole account?
How do I see my pending transactions? ~~ How do I see my partner's pending transactions on our joint card?

@insurance_claims
Does my policy cover me driving abroad? ~~ Does my policy cover my wife driving abroad?
How do I make a claim for my car? ~~ How do I make a claim against the other driver's insurer?
Does my home insurance cover my belongings? ~~ Does my home insurance cover my lodger's belongings?
Is my laptop covered at home? ~~ Is my laptop covered anywhere in the world?
What does my policy cover? ~~ What does the premium version of my policy cover?
Is my child covered on my travel insurance? ~~ Is my adult child covered on my travel insurance?
Can I claim for damage to my own car? ~~ Can I claim for damage to a hire car?
How do I cancel my car insurance? ~~ How do I cancel all my Mirevale policies?

@telecom_mobile
How much data do I have left? ~~ How much data does my whole family plan have left?
Is roaming included in Europe? ~~ Is roaming included worldwide?
How do I block this number? ~~ How do I block all withheld numbers?
Can I upgrade my phone early? ~~ Can I upgrade my daughter's phone early on my account?
How much is a SIM-only plan for a child? ~~ How much is a SIM-only plan for an adult?
Are calls to UK mobiles free? ~~ Are calls to international mobiles free?
How do I cancel my add-on? ~~ How do I cancel my entire plan?
How do I unlock my phone? ~~ How do I unlock a phone I bought second-hand?

@internet_service
Why is my internet slow? ~~ Why is everyone's internet slow in my area?
How do I change the wifi password on my router? ~~ How do I change the wifi password on my extender?
Can I get Zephra at home? ~~ Can I get Zephra at my business premises?
How do I block a website on my son's tablet? ~~ How do I block a website on every device in the house?
What's the price for new customers? ~~ What's the price for existing customers?
Is there an outage at my address? ~~ Is there an outage anywhere in the country?
How do I restart the hub? ~~ How do I restart the hub remotely from the app?
What speed do I get on wifi? ~~ What speed do I get over an ethernet cable?

@utilities
Why is my electricity bill high? ~~ Why are electricity bills high nationally?
How do I pay my gas bill? ~~ How do I pay my landlord's gas bill for the flat?
What's the standing charge for electricity? ~~ What's the standing charge for gas and electricity combined?
How do I submit a reading for my flat? ~~ How do I submit readings for all the flats in my building?
Can I get a smart meter in my house? ~~ Can I get a smart meter in a rented house?
Who do I call about a leak inside my home? ~~ Who do I call about a leak in the street?
How do I set up an account for my home? ~~ How do I set up an account for my small shop?
What's the cheapest tariff for me? ~~ What's the cheapest tariff on the market?

@tax
How do I file my tax return? ~~ How do I file a tax return on behalf of my elderly father?
Do I pay tax on my salary? ~~ Do I pay tax on my salary from a job abroad?
What's the personal allowance for adults? ~~ What's the personal allowance for children?
Can I claim expenses as an employee? ~~ Can I claim expenses as a sole trader?
How much tax do I pay on my pension? ~~ How much tax do I pay on my late husband's pension?
What's the income tax rate in England? ~~ What's the income tax rate in Scotland?
Do I need to declare this year's crypto gains? ~~ Do I need to declare all my crypto holdings?
Is my company car taxable? ~~ Is my company electric car taxable?

@travel_bookings
How do I cancel my hotel booking? ~~ How do I cancel one night of my hotel booking?
Do I need a visa for Turkey? ~~ Do I need a visa for Turkey for my son travelling alone?
Is breakfast included for adults? ~~ Is breakfast included for children?
How do I change my flight? ~~ How do I change my flight for just one passenger on the booking?
Can I bring my dog to the hotel? ~~ Can I bring my dog to the hotel restaurant?
What's the price of the room per night? ~~ What's the price of the room for the whole stay?
Do I need travel insurance for Europe? ~~ Do I need travel insurance for the whole world?
Is parking free at the hotel? ~~ Is parking free for guests with electric cars at the hotel?

@airline_baggage
How much baggage can I take? ~~ How much baggage can my infant take?
What's the cabin bag allowance on domestic flights? ~~ What's the cabin bag allowance on long-haul flights?
Can I take liquids in my hand luggage? ~~ Can I take baby milk in my hand luggage?
How much is one extra bag? ~~ How much is an extra bag for everyone on my booking?
Is my bag covered if it's lost? ~~ Is my bag covered if it's lost on a partner airline?
What's the weight limit for economy? ~~ What's the weight limit for business class?
How do I report my lost bag? ~~ How do I report my husband's lost bag?
Can I bring a bike on my flight? ~~ Can I bring an electric bike on my flight?

@ecommerce_orders
How do I return an item? ~~ How do I return an item from a marketplace seller?
Where is my order? ~~ Where is the order I sent to my sister?
Can I cancel this item? ~~ Can I cancel my whole order?
What's the returns window? ~~ What's the returns window for Christmas gifts?
How do I get a refund? ~~ How do I get a refund for the delivery charge?
Is delivery free? ~~ Is delivery free to Ireland?
Can I return clothes? ~~ Can I return underwear?
How do I change the delivery address? ~~ How do I change the delivery address for all future orders?

@subscriptions_streaming
How do I cancel my subscription? ~~ How do I cancel my son's subscription that's billed to my card?
How much is Fennix? ~~ How much is Fennix for students?
Can I download films? ~~ Can I download films on my laptop?
How do I delete my profile? ~~ How do I delete my whole account?
Is Fennix available in my country? ~~ Is this film available in my country?
How do I change my payment card? ~~ How do I change the payment card for my gifted subscription?
Can I share my account? ~~ Can I share my account outside my household?
Why is this show not playing? ~~ Why is nothing playing?

@hr_payroll
How much annual leave do I get? ~~ How much annual leave do part-time staff get?
When is payday for permanent staff? ~~ When is payday for contractors?
How do I update my bank details? ~~ How do I update bank details for someone in my team?
How do I book a day off? ~~ How do I book a day off for my whole team?
What is the sick pay policy? ~~ What is the sick pay policy during probation?
How do I view my payslip? ~~ How do I view my payslips from before I changed roles?
What's the pension contribution rate? ~~ What's the pension contribution rate for senior managers?
How do I claim expenses? ~~ How do I claim expenses for overseas travel?

@it_helpdesk
How do I reset my password? ~~ How do I reset a password for a new starter in my team?
Why is my laptop slow? ~~ Why are all the laptops in our office slow?
How do I install software? ~~ How do I install software on a shared lab computer?
How do I access my email? ~~ How do I access my manager's email while they're off?
How do I connect to the wifi? ~~ How do I connect a personal phone to the corporate wifi?
How do I get a new laptop? ~~ How do I get a new laptop for a contractor?
How do I delete a file? ~~ How do I permanently delete a file from the shared drive?
How do I set up MFA? ~~ How do I set up MFA for a shared mailbox?

@rental_housing
Can my landlord raise my rent? ~~ Can my landlord raise the rent on a council flat?
Who fixes the boiler in my flat? ~~ Who fixes the boiler in a shared house with a live-in landlord?
How much notice do I need to give? ~~ How much notice does my landlord need to give?
Can I have a pet in my flat? ~~ Can I have a pet in a student hall?
Is my deposit protected? ~~ Is a deposit for a lodger protected?
Can I sublet my room? ~~ Can I sublet my whole flat?
Who pays for repairs in my rental? ~~ Who pays for repairs in a holiday let?
How do I end my tenancy? ~~ How do I end my flatmate's tenancy?

@healthcare_admin
How do I book an appointment? ~~ How do I book an appointment for my elderly mother?
Does Halcyon cover dental check-ups? ~~ Does Halcyon cover dental check-ups for children?
How much is a prescription? ~~ How much is a prescription for over-60s?
How do I get my medical records? ~~ How do I get my deceased father's medical records?
Is the flu vaccine free? ~~ Is the flu vaccine free for pregnant women?
Can I register with this surgery? ~~ Can I register my newborn with this surgery?
Does my plan cover therapy? ~~ Does my plan cover therapy outside the network?
How do I change my GP? ~~ How do I change my child's GP?

@education_admin
How do I enrol in classes? ~~ How do I enrol in classes as an international student?
When is the tuition fee deadline? ~~ When is the tuition fee deadline for part-time students?
How do I get my transcript? ~~ How do I get my transcript from before I transferred?
How do I appeal my grade? ~~ How do I appeal my whole degree classification?
Can I get an extension? ~~ Can I get an extension on my dissertation?
Where is my exam? ~~ Where are all my exams this term?
How much are tuition fees? ~~ How much are tuition fees for overseas students?
How do I apply for accommodation? ~~ How do I apply for family accommodation?

@cooking
How long do I roast chicken? ~~ How long do I roast chicken thighs?
Can I freeze soup? ~~ Can I freeze soup with cream in it?
What's a substitute for eggs? ~~ What's a substitute for eggs in baking?
How do I make bread? ~~ How do I make gluten-free bread?
How long does cooked meat last in the fridge? ~~ How long does cooked fish last in the fridge?
Is it safe to eat raw eggs? ~~ Is it safe for pregnant women to eat raw eggs?
How much salt per day is healthy? ~~ How much salt per day is healthy for a toddler?
How do I cook pasta? ~~ How do I cook pasta at high altitude?

@general_knowledge
How many people live in London? ~~ How many people live in Greater London?
What's the tallest mountain in Europe? ~~ What's the tallest mountain in the world?
What's the biggest lake? ~~ What's the biggest lake in Africa?
How long do cats live? ~~ How long do indoor cats live?
What is the largest desert? ~~ What is the largest hot desert?
How many bones does a baby have? ~~ How many bones does an adult have?
What's the longest river in Europe? ~~ What's the longest river in the EU?
Who is the richest person? ~~ Who is the richest person in Asia?

@programming
How do I delete a git branch? ~~ How do I delete all merged git branches?
How do I find a file in Linux? ~~ How do I find a file across all mounted drives in Linux?
How do I sort a list in Python? ~~ How do I sort a list of tuples by the second element in Python?
How do I replace text in a string in JavaScript? ~~ How do I replace all occurrences of text in a string in JavaScript?
How do I drop a table in SQL? ~~ How do I drop all tables in a SQL database?
How do I stop a Docker container? ~~ How do I stop all Docker containers?
How do I undo a commit in git? ~~ How do I undo a commit that's already been pushed in git?
How do I update a package with npm? ~~ How do I update all packages with npm?

@personal_finance
How much should I save for retirement? ~~ How much should a couple save for retirement?
What's a good credit score? ~~ What's a good credit score for a mortgage?
Should I have an emergency fund? ~~ Should my teenager have an emergency fund?
How much can I put in an ISA? ~~ How much can I put in a junior ISA?
What's the best savings account? ~~ What's the best savings account for children?
How do I budget? ~~ How do I budget as a freelancer with irregular income?
Is it worth getting life insurance? ~~ Is it worth getting life insurance for my kids?
How do I invest for retirement? ~~ How do I invest for retirement ethically?
'''
