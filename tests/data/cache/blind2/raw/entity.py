# Hand-written entity_swap look-alikes (same_answer = false): another product/place/person/thing.
CATEGORY = "entity_swap"
DATA = r'''
@retail_banking
What's the interest rate on the Quillfield Easy Saver account? ~~ What's the interest rate on the Quillfield Fixed Saver account?
How do I close my Quillfield savings account? ~~ How do I close my Quillfield business account?
Can I pay in coins at a Quillfield branch? ~~ Can I pay in coins at a post office?
What is the sort code for Quillfield Bank? ~~ What is the sort code for Harrowgate Building Society?
How do I order a new chequebook? ~~ How do I order a new paying-in book?
What documents do I need to open an account as a student? ~~ What documents do I need to open an account as a sole trader?
How do I add a payee in the Quillfield app? ~~ How do I add a payee in Quillfield online banking on a computer?

@cards_payments
What's the foreign transaction fee on the Ambry Platinum card? ~~ What's the foreign transaction fee on the Ambry Classic card?
How do I add my Ambry card to my phone wallet? ~~ How do I add my Ambry card to my smartwatch?
Why was my card declined at the petrol station? ~~ Why was my card declined at the hotel?
Can I use my Ambry card in Japan? ~~ Can I use my Ambry card in Cuba?
How do I redeem my points for flights? ~~ How do I redeem my points for gift cards?
Is there a fee for using my debit card at a casino? ~~ Is there a fee for using my credit card at a casino?

@insurance_claims
Does my Mirevale policy cover my laptop? ~~ Does my Mirevale policy cover my bicycle?
How do I claim for a cracked windscreen? ~~ How do I claim for a cracked sunroof?
Does my travel insurance cover skiing? ~~ Does my travel insurance cover scuba diving?
What's the excess on my pet insurance? ~~ What's the excess on my home insurance?
Is my jewellery covered if it's stolen from my car? ~~ Is my jewellery covered if it's stolen from a hotel room?
Does my car insurance cover my daughter driving? ~~ Does my car insurance cover my neighbour driving?
Can I claim for damage caused by my dog? ~~ Can I claim for damage caused by my tenant?

@telecom_mobile
How much does roaming cost in France on Orvane? ~~ How much does roaming cost in Turkey on Orvane?
Does the Orvane Max plan include a Fennix subscription? ~~ Does the Orvane Lite plan include a Fennix subscription?
How do I set up voicemail on an Android phone? ~~ How do I set up voicemail on an iPhone?
Can I get the Nexa 12 phone on an Orvane contract? ~~ Can I get the Nexa 12 tablet on an Orvane contract?
Does Orvane have 5G coverage on the Isle of Skye? ~~ Does Orvane have 5G coverage on the Isle of Wight?
Is wifi calling supported on the Lumo S3? ~~ Is wifi calling supported on the Lumo A5?

@internet_service
Is Zephra Fiber available in Leeds? ~~ Is Zephra Fiber available in Aberdeen?
How do I reset the Zephra Hub 3? ~~ How do I reset the Zephra Hub 2?
How do I connect my games console to wifi? ~~ How do I connect my smart fridge to wifi?
What's the upload speed on Zephra Fibre 500? ~~ What's the upload speed on Zephra Fibre 900?
How do I block gaming sites on my home network? ~~ How do I block social media sites on my home network?
Can I use a Meshwell extender with the Zephra hub? ~~ Can I use a Netlynk extender with the Zephra hub?

@utilities
How do I submit a gas meter reading? ~~ How do I submit a water meter reading?
What are Pondera's Economy 7 rates? ~~ What are Pondera's Economy 10 rates?
Who do I call about a power cut in Bristol? ~~ Who do I call about a power cut in Glasgow?
How do I top up my electricity key? ~~ How do I top up my gas card?
How do I get a smart meter from Pondera? ~~ How do I get a smart meter from Lockbrook Water?
Is there a grant for replacing my boiler? ~~ Is there a grant for installing solar panels?

@tax
Do I pay tax on rental income from a flat in Spain? ~~ Do I pay tax on rental income from a flat in Ireland?
How do I claim tax relief on a work laptop? ~~ How do I claim tax relief on a work uniform?
Is there tax on selling a car? ~~ Is there tax on selling a painting?
What's the deadline for the self-assessment return? ~~ What's the deadline for the corporation tax return?
Do I need to pay tax on lottery winnings? ~~ Do I need to pay tax on poker winnings?
How is tax calculated on dividends? ~~ How is tax calculated on bond interest?

@travel_bookings
Do I need a visa to visit Vietnam with a UK passport? ~~ Do I need a visa to visit Thailand with a UK passport?
What time is check-in at the Harbourview Hotel? ~~ What time is check-in at the Harbourview Apartments?
How do I get from Lisbon airport to the city centre? ~~ How do I get from Porto airport to the city centre?
Can I change my Voyaro flight booking? ~~ Can I change my Voyaro car hire booking?
Is breakfast included at the Alder Lodge? ~~ Is breakfast included at the Alder Inn?
Do I need an international driving permit in Italy? ~~ Do I need an international driving permit in Japan?
Is the Grand Meridale hotel wheelchair accessible? ~~ Is the Grand Meridale spa wheelchair accessible?

@airline_baggage
Can I take a surfboard on Brisa Air? ~~ Can I take a kayak on Brisa Air?
What is the cabin bag allowance on Brisa Air? ~~ What is the cabin bag allowance on Solent Airways?
Can I bring a hairdryer in my carry-on? ~~ Can I bring a hair straightener in my carry-on?
Can I pack a camping stove in my checked bag? ~~ Can I pack a camping gas canister in my checked bag?
Where do I collect oversized baggage at Dublin airport? ~~ Where do I collect oversized baggage at Malaga airport?
Can I bring a car seat for my baby on Brisa? ~~ Can I bring a booster seat for my child on Brisa?

@ecommerce_orders
Where is my order of the Rowan sofa? ~~ Where is my order of the Rowan armchair?
How do I return a mattress to Cartwell? ~~ How do I return a pillow to Cartwell?
Do you deliver to Northern Ireland? ~~ Do you deliver to the Channel Islands?
Can I return earrings? ~~ Can I return a necklace?
Does Cartwell use Parcelfast for deliveries? ~~ Does Cartwell use Swiftpost for deliveries?
Can I pay by bank transfer on Cartwell? ~~ Can I pay with a gift card on Cartwell?
Is the Nimbus 40 kettle back in stock? ~~ Is the Nimbus 40 toaster back in stock?

@subscriptions_streaming
Is Fennix available on the Veltra smart TV? ~~ Is Fennix available on the Orbix games console?
How do I cancel Tandlo Music? ~~ How do I cancel Tandlo Podcasts+?
When does season 3 of The Quiet Harbour come out on Fennix? ~~ When does season 3 of Northbound come out on Fennix?
Can I watch Fennix in Canada? ~~ Can I watch Fennix in India?
How much is the Fennix Premium plan? ~~ How much is the Fennix Basic with Ads plan?
Can I pay for Fennix with an Orvane phone bill? ~~ Can I pay for Fennix with a gift card?

@hr_payroll
How much annual leave do full-time staff in the London office get? ~~ How much annual leave do full-time staff in the Berlin office get?
Who do I contact in payroll about my pension? ~~ Who do I contact in payroll about my student loan deductions?
How do I claim expenses for a taxi? ~~ How do I claim expenses for a hotel?
When is the Christmas bonus paid? ~~ When is the summer bonus paid?
How do I book paternity leave? ~~ How do I book shared parental leave?
What is the policy on jury service? ~~ What is the policy on military reserve duty?

@it_helpdesk
How do I install Slackline on my work laptop? ~~ How do I install Zoomcast on my work laptop?
How do I connect to the VPN on a Mac? ~~ How do I connect to the VPN on Linux?
How do I set up email on my iPad? ~~ How do I set up email on my Android phone?
How do I get access to the finance shared drive? ~~ How do I get access to the HR shared drive?
How do I connect to the printer on the third floor? ~~ How do I connect to the plotter on the third floor?
How do I reset my password for the expenses system? ~~ How do I reset my password for the timesheet system?

@rental_housing
Who is responsible for fixing the washing machine in my rental? ~~ Who is responsible for fixing the dishwasher in my rental?
Can I keep a rabbit in my rented flat? ~~ Can I keep a snake in my rented flat?
How do I contact Larchmont Lettings for a repair? ~~ How do I contact my building's management company for a repair?
Who pays for the broadband in my rented flat? ~~ Who pays for the TV licence in my rented flat?
Who pays for the gardening in my rented house? ~~ Who pays for the window cleaning in my rented house?
Can the landlord show prospective tenants around? ~~ Can the landlord show prospective buyers around?

@healthcare_admin
Does Halcyon cover physiotherapy? ~~ Does Halcyon cover chiropractic treatment?
How do I book a flu vaccination? ~~ How do I book a shingles vaccination?
How do I get a referral to a dermatologist? ~~ How do I get a referral to a cardiologist?
Where is the Ashgrove Medical Centre? ~~ Where is the Ashgrove Dental Practice?
Can I get my prescription from Bellway Pharmacy? ~~ Can I get my prescription from the hospital pharmacy?
How do I get my son's vaccination records? ~~ How do I get my son's dental records?

@education_admin
When is the deadline to apply for Stoneleigh's MSc Data Science? ~~ When is the deadline to apply for Stoneleigh's MSc Economics?
How do I get a transcript from Stoneleigh University? ~~ How do I get a transcript from my secondary school?
Where is the Hartley Library? ~~ Where is the Hartley Lecture Theatre?
How do I apply for the Brennan Scholarship? ~~ How do I apply for the Stoneleigh Sports Bursary?
When are the French oral exams? ~~ When are the Spanish oral exams?
How do I join the chess society? ~~ How do I join the rowing club?

@cooking
How long do I roast a chicken for? ~~ How long do I roast a duck for?
What can I use instead of eggs in pancakes? ~~ What can I use instead of milk in pancakes?
How long do I boil new potatoes? ~~ How long do I boil sweet potatoes?
What temperature do I bake salmon at? ~~ What temperature do I bake cod at?
How do I make a basil pesto? ~~ How do I make a rocket pesto?
Can I freeze cooked rice? ~~ Can I freeze cooked couscous?
How do I make my brownies fudgy? ~~ How do I make my flapjacks fudgy?

@general_knowledge
What is the capital of Australia? ~~ What is the capital of Austria?
Who wrote Pride and Prejudice? ~~ Who wrote Wuthering Heights?
How tall is Mount Kilimanjaro? ~~ How tall is Mount Kenya?
When was the Eiffel Tower built? ~~ When was the Empire State Building built?
What is the chemical symbol for silver? ~~ What is the chemical symbol for sodium?
How many moons does Jupiter have? ~~ How many moons does Saturn have?
What language is spoken in Brazil? ~~ What language is spoken in Belgium?
Who painted The Starry Night? ~~ Who painted The Night Watch?

@programming
How do I reverse a list in Python? ~~ How do I reverse a list in Java?
How do I install a package with npm? ~~ How do I install a package with cargo?
How do I parse JSON in JavaScript? ~~ How do I parse XML in JavaScript?
What is the default port for PostgreSQL? ~~ What is the default port for MySQL?
How do I read a CSV file in pandas? ~~ How do I read an Excel file in pandas?
How do I create a branch in git? ~~ How do I create a tag in git?
How do I declare a constant in Rust? ~~ How do I declare a constant in Go?

@personal_finance
What's the annual ISA allowance? ~~ What's the annual pension allowance?
How do I open a Roth IRA? ~~ How do I open a 529 plan?
Should I invest in a global index fund? ~~ Should I invest in a gold ETF?
How does a car loan affect my credit score? ~~ How does a student loan affect my credit score?
What's the best way to save for my daughter's university? ~~ What's the best way to save for my daughter's wedding?
Is it better to pay off my car loan or my credit card? ~~ Is it better to pay off my car loan or my mortgage?
'''
