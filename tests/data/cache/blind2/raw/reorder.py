# Hand-written reorder pairs (same_answer = true): clauses moved, same content.
CATEGORY = "reorder"
DATA = r'''
@retail_banking
If I send a transfer after 6pm, when will it arrive? ~~ When will a transfer arrive if I send it after 6pm?
Can I withdraw cash abroad with my Quillfield debit card without a fee? ~~ Without paying a fee, can I withdraw cash abroad with my Quillfield debit card?
I'm moving to Spain next year, can I keep my Quillfield account open? ~~ Can I keep my Quillfield account open? I'm moving to Spain next year.
To open a savings account, do I need to be a Quillfield customer already? ~~ Do I need to already be a Quillfield customer to open a savings account?
How long do cheques take to clear when paid in at a branch? ~~ When paid in at a branch, how long do cheques take to clear?
For a joint account, do both of us need to sign the form? ~~ Do both of us need to sign the form for a joint account?
What happens to my direct debits if my account is frozen? ~~ If my account is frozen, what happens to my direct debits?
Using the app, how do I see my statements from last year? ~~ How do I see last year's statements using the app?
Is there a fee if I close my account within the first year? ~~ If I close my account within the first year, is there a fee?

@cards_payments
If I pay my card balance in full every month, will I ever pay interest? ~~ Will I ever pay interest if I pay my card balance in full every month?
When I use my Ambry card in a foreign currency, what exchange rate do you use? ~~ What exchange rate do you use when I use my Ambry card in a foreign currency?
Can I get a new card sent abroad while I'm travelling? ~~ While I'm travelling, can I get a new card sent abroad?
My card was swallowed by an ATM in Lisbon, what should I do? ~~ What should I do? An ATM in Lisbon swallowed my card.
For online purchases, does my card have fraud protection? ~~ Does my card have fraud protection for online purchases?
Is there a charge for using my credit card at a casino? ~~ At a casino, is there a charge for using my credit card?
After I report my card stolen, how soon can I get a replacement? ~~ How soon can I get a replacement after I report my card stolen?
If a payment is declined, do I still get charged by the merchant? ~~ Do I still get charged by the merchant if a payment is declined?

@insurance_claims
If my car is stolen, how long before you pay out? ~~ How long before you pay out if my car is stolen?
Does my policy cover me if I'm driving abroad in France? ~~ If I'm driving abroad in France, does my policy cover me?
While my claim is being processed, can I still renew my policy? ~~ Can I still renew my policy while my claim is being processed?
For storm damage to a fence, can I make a claim on home insurance? ~~ Can I make a claim on home insurance for storm damage to a fence?
My neighbour's tree fell on my garage, whose insurance pays? ~~ Whose insurance pays? My neighbour's tree fell on my garage.
Is flood damage covered if I live near a river? ~~ If I live near a river, is flood damage covered?
When I make a claim online, what photos do I need to upload? ~~ What photos do I need to upload when I make a claim online?
If I change my car halfway through the year, do I need a new policy? ~~ Do I need a new policy if I change my car halfway through the year?
Without a police report, can I still claim for a stolen phone? ~~ Can I still claim for a stolen phone without a police report?

@telecom_mobile
If I go over my data allowance, will I be charged extra? ~~ Will I be charged extra if I go over my data allowance?
When I travel to Canada, does my Orvane plan work there? ~~ Does my Orvane plan work in Canada when I travel there?
Can I change my plan in the middle of my billing cycle? ~~ In the middle of my billing cycle, can I change my plan?
To port my number, what information do I need from my old provider? ~~ What information do I need from my old provider to port my number?
How much does it cost to leave Orvane before my contract ends? ~~ Before my contract ends, how much does it cost to leave Orvane?
If my phone is stolen, can you block the IMEI? ~~ Can you block the IMEI if my phone is stolen?
Is there a charge for calling 0800 numbers from my mobile? ~~ From my mobile, is there a charge for calling 0800 numbers?
On the unlimited plan, is tethering included? ~~ Is tethering included on the unlimited plan?

@internet_service
If I move house, can I keep the same broadband contract? ~~ Can I keep the same broadband contract if I move house?
During an outage, will I get money off my bill? ~~ Will I get money off my bill during an outage?
How long after I order does installation usually take? ~~ Usually, how long does installation take after I order?
When the router light is flashing red, what does it mean? ~~ What does it mean when the router light is flashing red?
Can I get a discount if I sign up for 24 months? ~~ If I sign up for 24 months, can I get a discount?
For gaming, which Zephra package has the lowest latency? ~~ Which Zephra package has the lowest latency for gaming?
If I cancel within 14 days, do I pay anything? ~~ Do I pay anything if I cancel within 14 days?
My speed drops every time it rains, is that normal? ~~ Is it normal that my speed drops every time it rains?

@utilities
If I pay by direct debit, is my energy bill cheaper? ~~ Is my energy bill cheaper if I pay by direct debit?
When I move out, do I need to give you a final meter reading? ~~ Do I need to give you a final meter reading when I move out?
How do I get the smart meter fixed if it stops sending readings? ~~ If my smart meter stops sending readings, how do I get it fixed?
Is there a penalty for leaving my fixed tariff early? ~~ If I leave my fixed tariff early, is there a penalty?
During a heatwave, is there a hosepipe ban in my area? ~~ Is there a hosepipe ban in my area during a heatwave?
If the power cut lasts more than 12 hours, am I entitled to compensation? ~~ Am I entitled to compensation if the power cut lasts more than 12 hours?
For a new build house, how do I find out who supplies the gas? ~~ How do I find out who supplies the gas for a new build house?
Can I get a refund on my water bill if I was away for three months? ~~ If I was away for three months, can I get a refund on my water bill?

@tax
If I work from home two days a week, can I claim tax relief? ~~ Can I claim tax relief if I work from home two days a week?
When I sell my main home, do I pay capital gains tax? ~~ Do I pay capital gains tax when I sell my main home?
Do I need to file a return if my only income is my salary? ~~ If my only income is my salary, do I need to file a return?
For a side business making under 1,000 a year, do I have to register? ~~ Do I have to register for a side business making under 1,000 a year?
If I made a loss on shares, can I offset it against gains? ~~ Can I offset a loss on shares against gains?
Is tax taken off my pension when I withdraw a lump sum? ~~ When I withdraw a lump sum from my pension, is tax taken off?
After I submit my return online, how long until I get a refund? ~~ How long until I get a refund after I submit my return online?
Can I claim my child's nursery fees as a tax deduction? ~~ As a tax deduction, can I claim my child's nursery fees?

@travel_bookings
If my flight is delayed, will the hotel hold my room? ~~ Will the hotel hold my room if my flight is delayed?
When I book a non-refundable rate, can I still change the dates? ~~ Can I still change the dates when I book a non-refundable rate?
For a family of five, which room type should I book? ~~ Which room type should I book for a family of five?
Is the airport transfer included when I book a package holiday? ~~ When I book a package holiday, is the airport transfer included?
If I cancel 48 hours before check-in, do I get a refund? ~~ Do I get a refund if I cancel 48 hours before check-in?
My passport expires in four months, can I still travel to Thailand? ~~ Can I still travel to Thailand? My passport expires in four months.
Without a credit card, can I still book a hotel on Voyaro? ~~ Can I still book a hotel on Voyaro without a credit card?
At check-in, will the hotel ask for a deposit? ~~ Will the hotel ask for a deposit at check-in?
If the hotel is overbooked, what compensation do I get? ~~ What compensation do I get if the hotel is overbooked?

@airline_baggage
If my bag is over 23kg, how much will I pay? ~~ How much will I pay if my bag is over 23kg?
On a connecting flight with two airlines, will my bag go through to the final destination? ~~ Will my bag go through to the final destination on a connecting flight with two airlines?
Can I carry a duty-free bottle on my connecting flight? ~~ On my connecting flight, can I carry a duty-free bottle?
When my bag arrives damaged, how long do I have to report it? ~~ How long do I have to report it when my bag arrives damaged?
For a flight to Madrid, can I bring two cabin bags? ~~ Can I bring two cabin bags for a flight to Madrid?
If I buy extra baggage online, is it cheaper than at the airport? ~~ Is extra baggage cheaper if I buy it online than at the airport?
Is my suitcase covered if it's lost on a domestic flight? ~~ If it's lost on a domestic flight, is my suitcase covered?
With a child car seat, do I pay extra to check it in? ~~ Do I pay extra to check in a child car seat?

@ecommerce_orders
If I return one item from a bundle, do I get a partial refund? ~~ Do I get a partial refund if I return one item from a bundle?
When an item is out of stock, will I be notified when it's back? ~~ Will I be notified when an item is back if it's out of stock?
Can I return a sale item if it doesn't fit? ~~ If a sale item doesn't fit, can I return it?
For orders over 50, is delivery free? ~~ Is delivery free for orders over 50?
If the courier damages my parcel, who do I contact? ~~ Who do I contact if the courier damages my parcel?
My order was split into two parcels, will I pay shipping twice? ~~ Will I pay shipping twice? My order was split into two parcels.
When I paid with a gift card, how is my refund given? ~~ How is my refund given when I paid with a gift card?
Can I cancel part of my order before it ships? ~~ Before it ships, can I cancel part of my order?
Using a promo code, can I still get free shipping? ~~ Can I still get free shipping using a promo code?

@subscriptions_streaming
If I cancel today, can I keep watching until the end of the month? ~~ Can I keep watching until the end of the month if I cancel today?
When my free trial ends, will I be charged automatically? ~~ Will I be charged automatically when my free trial ends?
Can I watch Fennix in another country while I'm on holiday? ~~ While I'm on holiday, can I watch Fennix in another country?
If I upgrade to Premium mid-month, how is the price worked out? ~~ How is the price worked out if I upgrade to Premium mid-month?
On the family plan, can each member have their own playlists? ~~ Can each member have their own playlists on the family plan?
Do downloaded episodes expire after I cancel? ~~ After I cancel, do downloaded episodes expire?
With the basic plan, can I watch on my TV? ~~ Can I watch on my TV with the basic plan?
If my payment fails, how long before my account is suspended? ~~ How long before my account is suspended if my payment fails?

@hr_payroll
If I start on the 15th, will I be paid for the full month? ~~ Will I be paid for the full month if I start on the 15th?
When I work on a bank holiday, do I get extra pay? ~~ Do I get extra pay when I work on a bank holiday?
Can I take unpaid leave for a family emergency? ~~ For a family emergency, can I take unpaid leave?
How is my holiday calculated if I work part time? ~~ If I work part time, how is my holiday calculated?
During my notice period, do I still accrue annual leave? ~~ Do I still accrue annual leave during my notice period?
If I'm off sick for more than a week, do I need a doctor's note? ~~ Do I need a doctor's note if I'm off sick for more than a week?
Is my bonus taxed differently from my salary? ~~ Compared with my salary, is my bonus taxed differently?
After probation, does my notice period change? ~~ Does my notice period change after probation?
When I go on maternity leave, what happens to my pension contributions? ~~ What happens to my pension contributions when I go on maternity leave?

@it_helpdesk
If I forget my password while travelling, how can I reset it? ~~ How can I reset my password if I forget it while travelling?
When I connect to the VPN, why does my internet stop working? ~~ Why does my internet stop working when I connect to the VPN?
Can I use my personal laptop for work if I install the security software? ~~ If I install the security software, can I use my personal laptop for work?
My screen goes black after I plug in the docking station, how do I fix it? ~~ How do I fix it? My screen goes black after I plug in the docking station.
For external guests, how do I set up a Teams meeting? ~~ How do I set up a Teams meeting for external guests?
If I leave the company, what happens to my files on the shared drive? ~~ What happens to my files on the shared drive if I leave the company?
On a Mac, how do I install the company printer driver? ~~ How do I install the company printer driver on a Mac?
Is it safe to open an attachment if the sender is internal? ~~ If the sender is internal, is it safe to open an attachment?

@rental_housing
If the landlord sells the house, do I have to move out? ~~ Do I have to move out if the landlord sells the house?
When my lease ends, can the landlord raise the rent? ~~ Can the landlord raise the rent when my lease ends?
Can I withhold rent if the heating isn't fixed? ~~ If the heating isn't fixed, can I withhold rent?
For a two-bedroom flat, how much deposit can a landlord ask for? ~~ How much deposit can a landlord ask for a two-bedroom flat?
Who pays for the repair if I accidentally break a window? ~~ If I accidentally break a window, who pays for the repair?
My flatmate moved out without paying, am I liable for their rent? ~~ Am I liable for my flatmate's rent? They moved out without paying.
If I give notice now, when is my last day? ~~ When is my last day if I give notice now?
Without a written contract, do I still have tenant rights? ~~ Do I still have tenant rights without a written contract?

@healthcare_admin
If I miss my appointment, will I be charged? ~~ Will I be charged if I miss my appointment?
When I'm travelling abroad, does my Halcyon plan cover emergencies? ~~ Does my Halcyon plan cover emergencies when I'm travelling abroad?
Can I get my prescription delivered to my home? ~~ To my home, can I get my prescription delivered?
For a blood test, do I need to fast beforehand? ~~ Do I need to fast before a blood test?
How long does a referral take if it's marked urgent? ~~ If it's marked urgent, how long does a referral take?
If I change jobs, can I keep my Halcyon cover? ~~ Can I keep my Halcyon cover if I change jobs?
My son turns 18 next month, will he still be on my health plan? ~~ Will my son still be on my health plan? He turns 18 next month.
Before surgery, do I need to get approval from Halcyon? ~~ Do I need to get approval from Halcyon before surgery?

@education_admin
If I fail a module, can I retake it next year? ~~ Can I retake a module next year if I fail it?
When I withdraw from a course, do I get a refund on fees? ~~ Do I get a refund on fees when I withdraw from a course?
Can I submit my assignment late if I'm ill? ~~ If I'm ill, can I submit my assignment late?
For international students, when is the tuition deposit due? ~~ When is the tuition deposit due for international students?
If I miss the enrolment deadline, can I still register? ~~ Can I still register if I miss the enrolment deadline?
How many credits do I need to graduate with honours? ~~ To graduate with honours, how many credits do I need?
During the summer, is the library open? ~~ Is the library open during the summer?
My child is starting school in September, when do I apply? ~~ When do I apply? My child is starting school in September.

@cooking
If I don't have eggs, what can I use in brownies? ~~ What can I use in brownies if I don't have eggs?
When roasting a chicken, should I cover it with foil? ~~ Should I cover a chicken with foil when roasting it?
Can I freeze bread dough after it has risen? ~~ After it has risen, can I freeze bread dough?
How long do I cook pasta if it's fresh rather than dried? ~~ If pasta is fresh rather than dried, how long do I cook it?
For a fan oven, do I lower the temperature in the recipe? ~~ Do I lower the recipe temperature for a fan oven?
If my custard splits, how do I fix it? ~~ How do I fix my custard if it splits?
Before cooking rice, should I rinse it? ~~ Should I rinse rice before cooking it?
Is it safe to eat raw cookie dough if there's no egg in it? ~~ If there's no egg in it, is raw cookie dough safe to eat?
With a slow cooker, how long does a beef stew take? ~~ How long does a beef stew take in a slow cooker?

@general_knowledge
In the southern hemisphere, which way does water drain? ~~ Which way does water drain in the southern hemisphere?
When it's noon in London, what time is it in New York? ~~ What time is it in New York when it's noon in London?
If you dropped a feather and a hammer on the Moon, which would land first? ~~ Which would land first if you dropped a feather and a hammer on the Moon?
Why do leaves change colour in autumn? ~~ In autumn, why do leaves change colour?
Of all the planets, which has the most moons? ~~ Which planet has the most moons of all the planets?
How many people were on the Titanic when it sank? ~~ When the Titanic sank, how many people were on board?
During a solar eclipse, why does it get cold? ~~ Why does it get cold during a solar eclipse?
At what age did Mozart write his first symphony? ~~ Mozart wrote his first symphony at what age?

@programming
In Python, how do I check if a string contains a substring? ~~ How do I check if a string contains a substring in Python?
When I run npm install, why do I get permission errors? ~~ Why do I get permission errors when I run npm install?
If a git push is rejected, how do I fix it without losing my changes? ~~ How do I fix a rejected git push without losing my changes?
How do I get the last element of an array in JavaScript? ~~ In JavaScript, how do I get the last element of an array?
Using pandas, how do I drop rows with missing values? ~~ How do I drop rows with missing values using pandas?
In SQL, how do I join two tables on a column with different names? ~~ How do I join two tables on a column with different names in SQL?
For a React component, where should I fetch data? ~~ Where should I fetch data for a React component?
If my Docker container exits immediately, how do I see why? ~~ How do I see why my Docker container exits immediately?
With regex, how do I match an email address? ~~ How do I match an email address with regex?

@personal_finance
If I'm 30 with no savings, how should I start a pension? ~~ How should I start a pension if I'm 30 with no savings?
When interest rates rise, what happens to bond prices? ~~ What happens to bond prices when interest rates rise?
Should I invest my bonus or pay off my credit card? ~~ Pay off my credit card or invest my bonus, which should I do?
For a first-time buyer, how big should the deposit be? ~~ How big should the deposit be for a first-time buyer?
If I'm self-employed, how much should I put aside for tax? ~~ How much should I put aside for tax if I'm self-employed?
Is it worth getting a credit card just to build credit? ~~ Just to build credit, is it worth getting a credit card?
With a low income, how can I still save money? ~~ How can I still save money with a low income?
In a recession, are index funds still a good idea? ~~ Are index funds still a good idea in a recession?
'''
