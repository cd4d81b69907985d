# Hand-written number_change look-alikes (same_answer = false): amounts, dates, durations, counts.
CATEGORY = "number_change"
DATA = r'''
@retail_banking
What's the fee for sending 500 euros abroad from my Quillfield account? ~~ What's the fee for sending 5,000 euros abroad from my Quillfield account?
How much interest will I earn on 10,000 in the Easy Saver over a year? ~~ How much interest will I earn on 1,000 in the Easy Saver over a year?
Can I withdraw 300 in cash at once from a Quillfield ATM? ~~ Can I withdraw 3,000 in cash at once from a Quillfield ATM?
How much does it cost to go 50 over my overdraft limit? ~~ How much does it cost to go 500 over my overdraft limit?
I'm 17, can I open a Quillfield current account? ~~ I'm 15, can I open a Quillfield current account?
Can I get statements going back 2 years? ~~ Can I get statements going back 8 years?
What happens to a cheque that is 5 months old? ~~ What happens to a cheque that is 7 months old?
Is there a fee for making more than 3 withdrawals a month from Easy Saver? ~~ Is there a fee for making more than 6 withdrawals a month from Easy Saver?
Can I switch my account to Quillfield in 3 working days? ~~ Can I switch my account to Quillfield in 10 working days?

@cards_payments
Can I tap my card for a 95 pound payment? ~~ Can I tap my card for a 45 pound payment?
What's the interest on a 2,000 balance transfer over 12 months? ~~ What's the interest on a 2,000 balance transfer over 24 months?
Do I pay a fee on a 20 dollar cash advance? ~~ Do I pay a fee on a 200 dollar cash advance?
What credit limit would I get on the Ambry card earning 20,000 a year? ~~ What credit limit would I get on the Ambry card earning 80,000 a year?
Can I dispute a transaction from 90 days ago? ~~ Can I dispute a transaction from 200 days ago?
My card payment is 3 days late, will I be charged a fee? ~~ My card payment is 35 days late, will I be charged a fee?
How many reward points do I get for spending 1,000? ~~ How many reward points do I get for spending 100?
Can I have 4 additional cardholders on my account? ~~ Can I have 10 additional cardholders on my account?
I entered my PIN wrong 2 times, is my card blocked? ~~ I entered my PIN wrong 3 times, is my card blocked?

@insurance_claims
Is a claim under 250 worth making with a 200 excess? ~~ Is a claim under 250 worth making with a 100 excess?
I had an accident 2 days ago, is it too late to report it? ~~ I had an accident 2 months ago, is it too late to report it?
How much does it cost to add a 17-year-old driver to my policy? ~~ How much does it cost to add a 25-year-old driver to my policy?
Is jewellery worth 1,500 covered without being listed? ~~ Is jewellery worth 15,000 covered without being listed?
Does travel insurance cover a trip of 45 days? ~~ Does travel insurance cover a trip of 120 days?
Will my premium go up after 1 claim in 5 years? ~~ Will my premium go up after 3 claims in 5 years?
My house will be empty for 20 days, am I still covered? ~~ My house will be empty for 70 days, am I still covered?
Do 2 years of no-claims get me the maximum discount? ~~ Do 9 years of no-claims get me the maximum discount?

@telecom_mobile
How much does the 30GB Orvane plan cost? ~~ How much does the 100GB Orvane plan cost?
What's the cost of an early upgrade with 3 months left on my contract? ~~ What's the cost of an early upgrade with 13 months left on my contract?
Can I add 5 lines to my family plan? ~~ Can I add 2 lines to my family plan?
Is a 12-month SIM-only deal cheaper than a 24-month one? ~~ Is a 1-month SIM-only deal cheaper than a 24-month one?
I'm abroad for 2 weeks, will roaming be included? ~~ I'm abroad for 4 months, will roaming be included?
How many GB do I get with the 10 pound data add-on? ~~ How many GB do I get with the 20 pound data add-on?
My PAC code is 31 days old, does it still work? ~~ My PAC code is 3 days old, does it still work?
I used 45GB on my 40GB plan, how much will I be charged? ~~ I used 41GB on my 40GB plan, how much will I be charged?

@internet_service
Is 100 Mbps enough for a house with 6 people streaming? ~~ Is 100 Mbps enough for a house with 2 people streaming?
What does the 500 Mbps plan cost per month? ~~ What does the 150 Mbps plan cost per month?
How much do I pay to cancel with 6 months left? ~~ How much do I pay to cancel with 16 months left?
My internet has been down for 3 hours, do I get compensation? ~~ My internet has been down for 3 days, do I get compensation?
Can I connect 40 devices to the Zephra hub? ~~ Can I connect 400 devices to the Zephra hub?
I'm getting 20 Mbps on a 900 plan, is that a fault? ~~ I'm getting 800 Mbps on a 900 plan, is that a fault?
Is there an installation fee on an 18-month contract? ~~ Is there an installation fee on a 24-month contract?
Can I put the router 5 metres from the fibre socket? ~~ Can I put the router 50 metres from the fibre socket?

@utilities
Is 250 a month normal for gas and electric in a 2-bed flat? ~~ Is 250 a month normal for gas and electric in a 5-bed house?
My bill is 3 months overdue, will you disconnect me? ~~ My bill is 3 days overdue, will you disconnect me?
How much compensation for a power cut lasting 12 hours? ~~ How much compensation for a power cut lasting 48 hours?
What's the daily cost of electricity if I use 7kWh a day? ~~ What's the daily cost of electricity if I use 17kWh a day?
Is a 6 year old boiler worth repairing? ~~ Is a 16 year old boiler worth repairing?
My meter reading is 8 months old, will my bill be estimated? ~~ My meter reading is 8 days old, will my bill be estimated?
How much water does a family of 2 use per day? ~~ How much water does a family of 6 use per day?
Can I get a 2 year fixed tariff? ~~ Can I get a 5 year fixed tariff?

@tax
Do I pay tax if I earn 11,000 a year? ~~ Do I pay tax if I earn 31,000 a year?
What's the penalty if my tax return is 1 day late? ~~ What's the penalty if my tax return is 6 months late?
How much tax on a 5,000 bonus? ~~ How much tax on a 50,000 bonus?
Can I claim for a home office if I work from home 1 day a week? ~~ Can I claim for a home office if I work from home 5 days a week?
Do I pay capital gains on shares I held for 11 months? ~~ Do I pay capital gains on shares I held for 13 months?
I sold 3 items on a marketplace app this year, do I need to declare it? ~~ I sold 300 items on a marketplace app this year, do I need to declare it?
Is a gift of 3,000 from my parents taxable? ~~ Is a gift of 300,000 from my parents taxable?
Can I still amend my tax return from 2 years ago? ~~ Can I still amend my tax return from 6 years ago?
My side income is 900 a year, do I need to register? ~~ My side income is 9,000 a year, do I need to register?

@travel_bookings
Can I cancel my Voyaro hotel 72 hours before check-in for free? ~~ Can I cancel my Voyaro hotel 12 hours before check-in for free?
Do I need a visa for a 20 day trip to Brazil? ~~ Do I need a visa for a 120 day trip to Brazil?
Can 5 people stay in the family room? ~~ Can 3 people stay in the family room?
Is the room rate for 2 nights or per night? ~~ Is the room rate for 7 nights or per night?
My passport expires in 8 months, can I travel to Indonesia? ~~ My passport expires in 3 months, can I travel to Indonesia?
How much is a 1 week car hire in Crete? ~~ How much is a 3 week car hire in Crete?
Is there a discount for booking 10 rooms? ~~ Is there a discount for booking 2 rooms?
My flight is delayed 2 hours, am I entitled to compensation? ~~ My flight is delayed 5 hours, am I entitled to compensation?
Do children under 2 fly free? ~~ Do children under 12 fly free?

@airline_baggage
Is a 22kg bag over the Brisa checked allowance? ~~ Is a 32kg bag over the Brisa checked allowance?
How much for an extra 5kg on my checked bag? ~~ How much for an extra 15kg on my checked bag?
Is a 55cm suitcase allowed as cabin baggage? ~~ Is a 65cm suitcase allowed as cabin baggage?
Can I bring a 100ml bottle of perfume in hand luggage? ~~ Can I bring a 150ml bottle of perfume in hand luggage?
My bag has been missing for 2 days, what can I claim? ~~ My bag has been missing for 22 days, what can I claim?
Can I take a 20,000 mAh power bank? ~~ Can I take a 40,000 mAh power bank?
How much does it cost to check 2 bags? ~~ How much does it cost to check 4 bags?
My bag was damaged 5 days ago, can I still report it? ~~ My bag was damaged 25 days ago, can I still report it?

@ecommerce_orders
Is delivery free on orders over 30? ~~ Is delivery free on orders over 60?
Can I return something I bought 20 days ago? ~~ Can I return something I bought 40 days ago?
I ordered 2 days ago and it hasn't shipped, is that normal? ~~ I ordered 2 weeks ago and it hasn't shipped, is that normal?
Can I buy 20 of the same item in one order? ~~ Can I buy 2 of the same item in one order?
My refund was processed 3 days ago, when will I get it? ~~ My refund was processed 30 days ago, when will I get it?
Do I get 10% off my first order? ~~ Do I get 20% off my first order?
Can I pay in 3 instalments? ~~ Can I pay in 12 instalments?
My parcel is 1 day late, can I get a refund of the delivery fee? ~~ My parcel is 10 days late, can I get a refund of the delivery fee?

@subscriptions_streaming
Can I stream on 4 screens at once with Fennix Standard? ~~ Can I stream on 2 screens at once with Fennix Standard?
How much is Fennix for 12 months if I pay upfront? ~~ How much is Fennix for 6 months if I pay upfront?
Can I have 6 people on the Tandlo family plan? ~~ Can I have 8 people on the Tandlo family plan?
If I cancel the Fennix free trial on day 6, will I be charged? ~~ If I cancel the Fennix free trial on day 16, will I be charged?
Can I keep 100 downloads on my phone at once? ~~ Can I keep 25 downloads on my phone at once?
If I cancel after 3 days, do I get a refund? ~~ If I cancel after 3 weeks, do I get a refund?
My payment failed 2 days ago, is my account still active? ~~ My payment failed 20 days ago, is my account still active?
Can a 13 year old have their own Fennix profile? ~~ Can a 7 year old have their own Fennix profile?

@hr_payroll
How much holiday do I get after 5 years of service? ~~ How much holiday do I get after 10 years of service?
How much notice do I give if I've worked here 6 months? ~~ How much notice do I give if I've worked here 6 years?
What's the overtime rate after 40 hours a week? ~~ What's the overtime rate after 48 hours a week?
How much sick pay do I get after 4 days off? ~~ How much sick pay do I get after 4 weeks off?
Can I carry over 5 days of leave? ~~ Can I carry over 15 days of leave?
What mileage allowance do I get if I drive 5,000 business miles a year? ~~ What mileage allowance do I get if I drive 15,000 business miles a year?
Is there a pay rise after 12 months? ~~ Is there a pay rise after 3 months?
How much maternity pay do I get for the first 6 weeks? ~~ How much maternity pay do I get for weeks 7 to 39?

@it_helpdesk
My laptop is 2 years old, can I get a replacement? ~~ My laptop is 5 years old, can I get a replacement?
I entered the wrong password 3 times, how long am I locked out? ~~ I entered the wrong password 10 times, how long am I locked out?
Can I attach a 20MB file to an email? ~~ Can I attach a 200MB file to an email?
How do I get more than 50GB of storage? ~~ How do I get more than 5TB of storage?
Can I have a Teams meeting with 300 people? ~~ Can I have a Teams meeting with 30 people?
My password expires in 3 days, how do I change it? ~~ My password expired 3 days ago, how do I change it?
Can I recover a file I deleted 10 days ago? ~~ Can I recover a file I deleted 100 days ago?
Is a 2-monitor setup allowed? ~~ Is a 3-monitor setup allowed?

@rental_housing
My landlord wants 6 weeks' deposit, is that legal? ~~ My landlord wants 5 weeks' deposit, is that legal?
Can my rent go up by 5% this year? ~~ Can my rent go up by 25% this year?
How much notice do I need on a 6-month tenancy? ~~ How much notice do I need on a 3-year tenancy?
The landlord gave 24 hours' notice for a visit, is that enough? ~~ The landlord gave 2 hours' notice for a visit, is that enough?
My rent is 1 week late, what happens? ~~ My rent is 2 months late, what happens?
The boiler has been broken for 2 days, what can I do? ~~ The boiler has been broken for 2 weeks, what can I do?
Can 4 unrelated people share a house without a licence? ~~ Can 6 unrelated people share a house without a licence?
My deposit hasn't been returned after 10 days, is that normal? ~~ My deposit hasn't been returned after 10 weeks, is that normal?

@healthcare_admin
How much is a prescription for 2 items? ~~ How much is a prescription for 5 items?
Can I book a GP appointment 4 weeks ahead? ~~ Can I book a GP appointment 4 days ahead?
How long is the wait for an MRI on a 2-week referral? ~~ How long is the wait for an MRI on an 18-week referral?
Does Halcyon cover 10 physio sessions a year? ~~ Does Halcyon cover 20 physio sessions a year?
My child is 5, which vaccines are due? ~~ My child is 12, which vaccines are due?
I've had a cough for 3 days, should I book an appointment? ~~ I've had a cough for 3 weeks, should I book an appointment?
Will Halcyon pay a 90 pound claim if my excess is 100? ~~ Will Halcyon pay a 900 pound claim if my excess is 100?
Can I get a sick note for 5 days off? ~~ Can I get a sick note for 10 days off?

@education_admin
How many credits do I need to pass year 1? ~~ How many credits do I need to pass year 3?
My assignment is 1 day late, will I lose marks? ~~ My assignment is 8 days late, will I lose marks?
Can I take 4 modules this semester? ~~ Can I take 7 modules this semester?
What's the fee for a 1-year master's? ~~ What's the fee for a 2-year master's?
I'm 16, can I apply for the foundation year? ~~ I'm 21, can I apply for the foundation year?
Can I miss 2 weeks of classes for a family event? ~~ Can I miss 2 days of classes for a family event?
What grade do I need for a first, 70? ~~ What grade do I need for a 2:1, 60?
Can I resit an exam for the 2nd time? ~~ Can I resit an exam for the 4th time?

@cooking
How long do I roast a 2kg chicken? ~~ How long do I roast a 4kg chicken?
How much flour for 12 pancakes? ~~ How much flour for 30 pancakes?
How much dry rice do I need for 2 people? ~~ How much dry rice do I need for 8 people?
Can I bake at 180C instead of 200C? ~~ Can I bake at 160C instead of 200C?
How many grams is 1 cup of flour? ~~ How many grams is 3 cups of flour?
Is cooked rice safe to eat after 1 day in the fridge? ~~ Is cooked rice safe to eat after 5 days in the fridge?
Is 6 minutes enough to hard boil an egg? ~~ Is 12 minutes enough to hard boil an egg?
How do I scale a recipe for 4 to serve 10? ~~ How do I scale a recipe for 4 to serve 2?
How long to cook a 1 inch steak medium rare? ~~ How long to cook a 2 inch steak medium rare?

@general_knowledge
What happened in 1066? ~~ What happened in 1666?
Who was president of the US in 1960? ~~ Who was president of the US in 1990?
How many people lived on Earth in 1900? ~~ How many people lived on Earth in 1800?
What is 15% of 80? ~~ What is 15% of 800?
How far does light travel in 1 second? ~~ How far does light travel in 1 minute?
Which country won the 1998 World Cup? ~~ Which country won the 2006 World Cup?
How many days until Christmas if today is December 1? ~~ How many days until Christmas if today is November 1?
What is the square root of 144? ~~ What is the square root of 1444?

@programming
How do I split a list into chunks of 10 in Python? ~~ How do I split a list into 10 chunks in Python?
How do I sleep for 5 seconds in Python? ~~ How do I sleep for 5 milliseconds in Python?
How do I round a number to 2 decimal places in JavaScript? ~~ How do I round a number to the nearest 10 in JavaScript?
What does HTTP status 401 mean? ~~ What does HTTP status 403 mean?
How do I undo the last 3 commits in git? ~~ How do I undo the last commit in git?
What's the max value of a 32-bit signed integer? ~~ What's the max value of a 64-bit signed integer?
How do I run a cron job every 5 minutes? ~~ How do I run a cron job every 5 hours?
How do I install Python 3.8 on Ubuntu 20.04? ~~ How do I install Python 3.12 on Ubuntu 20.04?
What does exit code 137 mean in Docker? ~~ What does exit code 127 mean in Docker?

@personal_finance
How much will 10,000 grow to in 10 years at 7%? ~~ How much will 10,000 grow to in 30 years at 7%?
Can I afford a 300,000 house on a 50,000 salary? ~~ Can I afford a 300,000 house on a 90,000 salary?
How much should I save a month to retire at 55? ~~ How much should I save a month to retire at 67?
Is a 4% withdrawal rate safe? ~~ Is a 7% withdrawal rate safe?
How much emergency fund for 3 months of expenses at 2,000 a month? ~~ How much emergency fund for 6 months of expenses at 2,000 a month?
Should I take a 2-year or 5-year fixed mortgage? ~~ Should I take a 5-year or 10-year fixed mortgage?
What's my credit score impact if I miss 1 payment? ~~ What's my credit score impact if I miss 4 payments?
What's the monthly payment on a 20,000 loan over 5 years? ~~ What's the monthly payment on a 20,000 loan over 3 years?
'''
