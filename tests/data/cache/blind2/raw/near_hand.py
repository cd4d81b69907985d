# Hand-written near_repeat pairs (same_answer = true): typos, casing, punctuation,
# filler words, word order inside a phrase.
CATEGORY = "near_repeat"
DATA = r'''
@retail_banking
How do I set up a standing order? ~~ how do i setup a standing order
What's the overdraft fee at Quillfield? ~~ whats the overdraft fee at quillfeild??
How do I order a new debit card? ~~ Hi there, how do I order a new debit card please?
Where can I find my account number and sort code? ~~ where can I find my sort code and account number
Can I pay in cash at a post office? ~~ can i pay cash in at a post office
How do I change my PIN? ~~ How do I change my pin number?

@cards_payments
How do I freeze my Ambry card? ~~ how do u freeze my ambry card
What is the late payment fee on my credit card? ~~ What's the late-payment fee on my credit card
Why was my card declined online? ~~ why was my card declined online ?? it keeps happening
How do I get a copy of my card statement? ~~ How do I get a copy of my credit card statement, thanks
Can I use my card in the USA? ~~ Can I use my card in the U.S.A.?
What is the cash advance fee? ~~ whats the cash-advance fee

@insurance_claims
How do I make a car insurance claim? ~~ how do i make a claim on my car insurance
What is my policy excess? ~~ Hello, what is the excess on my policy?
Does my home insurance cover storm damage? ~~ does my home insurance cover storm damge
How long does a claim take? ~~ how long does a claim usually take
How do I renew my Mirevale policy? ~~ HOW DO I RENEW MY MIREVALE POLICY
Is windscreen damage covered? ~~ is windshield / windscreen damage covered?

@telecom_mobile
How do I check my data balance? ~~ how do I check my data balance pls
What is my PUK code? ~~ wat is my puk code
How do I get my PAC code? ~~ How do I get a PAC code?
Does my plan include roaming in Spain? ~~ does my plan include roaming in spain?
How do I cancel my Orvane contract? ~~ hey, how do i cancel my orvane contract
Why is my mobile data not working? ~~ why is my mobile data not working?!

@internet_service
How do I reset my router to factory settings? ~~ how to reset my router to factory settings
Why is my wifi so slow? ~~ why is my wi-fi sooo slow
What is my broadband speed supposed to be? ~~ what speed is my broadband supposed to be
How do I change the wifi name? ~~ How do I change the name of the wifi?
Is there an outage in my area? ~~ is there an outage in my area right now
How do I contact Zephra support? ~~ how do I contact zephra fiber support

@utilities
How do I submit a meter reading? ~~ how do I submit a meter reading please
Why is my gas bill so high? ~~ why is my gas bill soo high this month
How do I report a power cut? ~~ How can I report a power cut?
What is the price cap? ~~ whats the energy price cap
How do I pay my water bill? ~~ how do i pay my water bill?
Can I change my direct debit date? ~~ Can I change the date of my direct debit?

@tax
When is the tax return deadline? ~~ when is the deadline for tax returns
How do I check my tax code? ~~ how can i check my tax-code
Do I pay tax on tips? ~~ Do I have to pay tax on tips?
What is the personal allowance? ~~ What's the personal tax allowance?
How do I claim a tax refund? ~~ how do i claim a tax rebate/refund
What is the VAT rate on food? ~~ what's the vat rate on food?

@travel_bookings
How do I cancel my hotel booking? ~~ how do i cancel my hotel booking?? urgent
What time is checkout? ~~ what time is check out
Can I change the name on my booking? ~~ can I change the name on the booking
Is breakfast included? ~~ Is breakfast included in the price?
Do I need a visa for Canada? ~~ do i need a visa to go to canada
Where is my booking reference? ~~ where is my booking ref

@airline_baggage
What is the checked baggage allowance on Brisa Air? ~~ whats the checked bag allowance on brisa air
Can I bring a laptop in my carry-on? ~~ can i bring a laptop in my carry on
How much is an extra bag? ~~ How much does an extra bag cost?
My luggage is lost, what do I do? ~~ my luggage is lost what do i do!!
Can I take shampoo in hand luggage? ~~ can I take shampoo in my hand luggage
What size is a personal item? ~~ what size can a personal item be

@ecommerce_orders
Where is my order? ~~ wheres my order
How do I return an item? ~~ how do i return an item, please
Can I cancel my order? ~~ can i cancel my order?
How long does delivery take? ~~ how long does delivery usually take
Do you do free returns? ~~ do you offer free returns?
My parcel is late, what should I do? ~~ my parcel is late - what should I do

@subscriptions_streaming
How do I cancel Fennix? ~~ how do i cancel fennix
How much is Fennix Premium? ~~ How much does Fennix Premium cost?
Can I watch Fennix offline? ~~ can i watch fennix off line
How do I change my plan? ~~ how can I change my plan
Why is Fennix not working? ~~ why isnt fennix working
How do I add a profile? ~~ how do I add a new profile

@hr_payroll
When do we get paid? ~~ when do we get paid?
How many holiday days do I get? ~~ how many holiday days do i get per year
Where is my payslip? ~~ where's my payslip
How do I book annual leave? ~~ how do i book annual leave?
Who do I contact in payroll? ~~ who should I contact in payroll
How do I update my bank details? ~~ how do I update my bank details for my salary

@it_helpdesk
How do I reset my password? ~~ how do i reset my pasword
How do I connect to the VPN? ~~ how do I connect to the vpn?
My laptop is frozen, what do I do? ~~ my laptop is frozen what should i do
How do I install Office? ~~ how do I install microsoft office
Why can't I log in? ~~ why cant i log in???
How do I print from my laptop? ~~ how can I print from my laptop

@rental_housing
How do I get my deposit back? ~~ how do i get my deposit back
When is rent due? ~~ when is the rent due?
Can I have a cat in my flat? ~~ can i have a cat in my flat
Who fixes the boiler? ~~ who fixes the boiler, me or the landlord?
How do I report mould? ~~ how do i report mold
How much notice do I give? ~~ how much notice do i need to give

@healthcare_admin
How do I book a GP appointment? ~~ how do i book a gp appointment?
How do I get my repeat prescription? ~~ how do i get my repeat prescription
Can I get a flu jab? ~~ can i get a flu jab please
Where are my test results? ~~ where are my test results?
How do I cancel an appointment? ~~ how to cancel an appointment
What are the opening hours? ~~ what are your opening hours

@education_admin
When are exam results out? ~~ when are the exam results out
How do I get my transcript? ~~ how do i get my transcript?
How do I enrol? ~~ how do I enroll
When is the fee deadline? ~~ when is the deadline for fees
How do I change modules? ~~ how can I change my modules
Where is my timetable? ~~ where's my timetable

@cooking
How long do I boil an egg? ~~ how long do i boil an egg for
How do I cook rice? ~~ how to cook rice
What temperature for roast chicken? ~~ what temp for roast chicken
Can I freeze cooked pasta? ~~ can you freeze cooked pasta?
How do I make pancakes? ~~ how do I make pancakes??
How long to bake potatoes? ~~ how long to bake a potato

@general_knowledge
What is the capital of Canada? ~~ whats the capital of canada
Who wrote Hamlet? ~~ who wrote hamlet?
How tall is Mount Everest? ~~ how tall is mt everest
How many planets are there? ~~ how many planets are there in the solar system
What is the speed of sound? ~~ whats the speed of sound
When did World War 2 end? ~~ when did ww2 end

@programming
How do I reverse a string in Python? ~~ how to reverse a string in python
How do I undo git add? ~~ how do i undo a git add
What is a closure in JavaScript? ~~ what's a closure in javascript?
How do I install pip? ~~ how to install pip
How do I center a div? ~~ how do i centre a div
How do I merge two dictionaries in Python? ~~ how do I merge 2 dictionaries in python

@personal_finance
How much should I save each month? ~~ how much should i save each month
What is a Roth IRA? ~~ whats a roth ira
Should I pay off my mortgage early? ~~ should i pay my mortgage off early
How do I build credit? ~~ how do I build my credit?
What is an index fund? ~~ what's an index fund?
How much emergency fund do I need? ~~ how much of an emergency fund do i need
'''
