# Extra hand-written look-alikes (same_answer = false), mixed categories.
# "%category" lines switch the category; "@domain" lines switch the domain.
CATEGORY = "entity_swap"
DATA = r'''
%entity_swap
@retail_banking
Hi, what's the monthly fee on the Quillfield Everyday Plus account? ~~ Hi, what's the monthly fee on the Quillfield Premier account?
@cards_payments
my ambry card got eaten by a cash machine at the train station, what now ~~ my ambry card got eaten by a cash machine at the airport in Rome, what now
@travel_bookings
Is the Voyaro price for the Seaview Suite per person or per room? ~~ Is the Voyaro price for the Seaview Cabin tour per person or per group?
@utilities
Who reads the gas meter in a block of flats managed by Fairholme? ~~ Who reads the water meter in a block of flats managed by Fairholme?
@healthcare_admin
Does Halcyon Gold cover eye tests? ~~ Does Halcyon Gold cover hearing tests?
@programming
how do i catch a KeyError in python ~~ how do i catch an IndexError in python
@cooking
Can I use plain flour instead of bread flour for pizza dough? ~~ Can I use plain flour instead of bread flour for a sourdough loaf?
@general_knowledge
Which ocean is the Bermuda Triangle in? ~~ Which ocean is the Mariana Trench in?
@it_helpdesk
Our team's task tracker board won't load for me, who do I contact? ~~ Our team's wiki space won't load for me, who do I contact?
@hr_payroll
Is the Friday before the Easter weekend a paid day off here? ~~ Is the Monday after the Easter weekend a paid day off here?

%negation
@insurance_claims
I'm making a home insurance claim, do you need receipts for the items I'm claiming for? ~~ I'm making a home insurance claim, what if I don't have receipts for the items I'm claiming for?
@ecommerce_orders
Why can I see the Cartwell app order in my history on my laptop? ~~ Why can't I see the Cartwell app order in my history on my laptop?
@tax
Which of my side incomes need to go on my tax return? ~~ Which of my side incomes don't need to go on my tax return?
@rental_housing
My landlord did give me a gas safety certificate, what else should I have received? ~~ My landlord didn't give me a gas safety certificate, what should I do?
@subscriptions_streaming
Which Fennix plans show adverts? ~~ Which Fennix plans don't show adverts?

%number_change
@airline_baggage
Can my 2 kids share one 23kg checked bag? ~~ Can my 2 kids share one 32kg checked bag?
@education_admin
I got 58 in my dissertation, what classification is that? ~~ I got 68 in my dissertation, what classification is that?
@telecom_mobile
My phone is on a 36 month plan, can I leave after 24 months? ~~ My phone is on a 24 month plan, can I leave after 12 months?
@personal_finance
Is it worth overpaying my mortgage by 100 a month? ~~ Is it worth overpaying my mortgage by 1,000 a month?
@internet_service
We have 3 floors, will one Zephra booster be enough? ~~ We have 1 floor, will one Zephra booster be enough?

%scope_change
@cooking
how long do i microwave a jacket potato ~~ how long do i microwave four jacket potatoes at once
@general_knowledge
What's the population of New York City? ~~ What's the population of New York State?
@healthcare_admin
How do I get a copy of my latest blood test result? ~~ How do I get a copy of every blood test result I've ever had?
@it_helpdesk
How do I clear the cache in my browser? ~~ How do I clear the cache for just one website in my browser?
@travel_bookings
What's the refund policy for my hotel? ~~ What's the refund policy for the spa treatment I booked at my hotel?

%direction_swap
@retail_banking
Can my employer pay my wages into a Quillfield savings account? ~~ Can I pay my employer back from a Quillfield savings account?
@airline_baggage
My bag went from Brisa's Lisbon desk to the wrong carousel in Faro, who do I ask? ~~ My bag went from Brisa's Faro desk to the wrong carousel in Lisbon, who do I ask?
@programming
How do I convert a Unix timestamp to a datetime in Python? ~~ How do I convert a datetime to a Unix timestamp in Python?
@subscriptions_streaming
How do I move my Tandlo downloads from my phone to my SD card? ~~ How do I move my Tandlo downloads from my SD card to my phone?
@hr_payroll
My manager owes me time off in lieu, how do I claim it? ~~ I owe the company time after taking extra leave, how do I pay it back?

%range_or_time
@telecom_mobile
Do texts sent before midnight count in this month's bill? ~~ Do texts sent after midnight count in this month's bill?
@tax
Can I still claim for a van I bought before I started trading? ~~ Can I still claim for a van I bought after I stopped trading?
@ecommerce_orders
Are orders placed before 8pm sent the same day? ~~ Are orders placed after 8pm sent the same day?
@cooking
Should I add the salt before the eggs are beaten? ~~ Should I add the salt after the eggs are cooked?
@insurance_claims
Am I covered for damage done before I moved in? ~~ Am I covered for damage done after I moved out?

%opposite_wording
@education_admin
How do I make my student loan payments bigger? ~~ How do I make my student loan payments smaller?
@rental_housing
Can the landlord lengthen the notice period? ~~ Can the landlord shorten the notice period?
@utilities
Why is my smart meter reading faster than my old meter? ~~ Why is my smart meter reading slower than my old meter?
@travel_bookings
Which Voyaro hotels in Porto are closest to the old town? ~~ Which Voyaro hotels in Porto are furthest from the old town?
@general_knowledge
What's the wettest place on Earth? ~~ What's the driest place on Earth?
'''
