# Hand-written direction_swap look-alikes (same_answer = false): from/to, who owes whom,
# converting A to B vs B to A, sender vs receiver.
CATEGORY = "direction_swap"
DATA = r'''
@retail_banking
How do I move money from my savings to my current account? ~~ How do I move money from my current account to my savings?
How long does a transfer from Quillfield to another bank take? ~~ How long does a transfer from another bank to Quillfield take?
What's the fee for sending money from the UK to Poland? ~~ What's the fee for sending money from Poland to the UK?
How do I switch my account from Quillfield to Harrowgate? ~~ How do I switch my account from Harrowgate to Quillfield?
My friend owes me money, how do I request it in the app? ~~ I owe my friend money, how do I send it in the app?
Why was money taken from my account by Quillfield? ~~ Why was money paid into my account by Quillfield?
Can I transfer money from my joint account to my sole account? ~~ Can I transfer money from my sole account to my joint account?
What exchange rate do you use when converting pounds to euros? ~~ What exchange rate do you use when converting euros to pounds?
How do I receive an international payment? ~~ How do I send an international payment?

@cards_payments
How do I transfer a balance from my Ambry card to another card? ~~ How do I transfer a balance from another card to my Ambry card?
The merchant refunded me but the bank says it hasn't received it, who do I chase? ~~ The bank refunded me but the merchant says it hasn't received it, who do I chase?
How do I pay my Ambry card from my Quillfield account? ~~ How do I pay my Quillfield account from my Ambry card?
Why was I charged a fee for paying a merchant in dollars? ~~ Why was I charged a fee for being refunded by a merchant in dollars?
Can I move my reward points to my partner's account? ~~ Can my partner move their reward points to my account?
How do I send money to a friend with my card details? ~~ How does a friend send money to me with my card details?
Can I transfer money from my credit card to my bank account? ~~ Can I transfer money from my bank account to my credit card?
Why did a refund from Cartwell go to my old card instead of my new one? ~~ Why did a payment to Cartwell come from my old card instead of my new one?

@insurance_claims
The other driver hit me, how do I claim from their insurer? ~~ I hit the other driver, how do they claim from my insurer?
My tree fell on my neighbour's car, who pays? ~~ My neighbour's tree fell on my car, who pays?
Can I transfer my no-claims bonus from my company car to my own policy? ~~ Can I transfer my no-claims bonus from my own policy to a company car?
How do I switch my policy from Mirevale to Stonebridge Insurance? ~~ How do I switch my policy from Stonebridge Insurance to Mirevale?
My tenant damaged my property, whose insurance covers it? ~~ I damaged my landlord's property, whose insurance covers it?
If the accident wasn't my fault, does the other driver's insurer pay my excess back? ~~ If the accident was my fault, do I pay the other driver's excess?
Can I transfer my policy from my old car to my new car? ~~ Can I transfer my policy from my new car back to my old car?
Can I claim from the builder's insurance for damage they did to my house? ~~ Can the builder claim from my insurance for an injury at my house?

@telecom_mobile
How do I move my number from Orvane to Celltrio? ~~ How do I move my number from Celltrio to Orvane?
How much does it cost to call the UK from Spain? ~~ How much does it cost to call Spain from the UK?
How do I transfer data from my Android to an iPhone? ~~ How do I transfer data from my iPhone to an Android?
Can I send my spare data to my son? ~~ Can my son send his spare data to me?
Why am I charged for receiving calls abroad? ~~ Why am I charged for making calls abroad?
How do I switch from pay monthly to pay as you go? ~~ How do I switch from pay as you go to pay monthly?
How do I transfer credit from my phone to my daughter's phone? ~~ How do I transfer credit from my daughter's phone to mine?
How do I move my contract from my name to my wife's? ~~ How do I move my wife's contract to my name?

@internet_service
Why is my download speed fine but upload slow? ~~ Why is my upload speed fine but download slow?
Why can my laptop ping the printer but the printer can't reach my laptop? ~~ Why can the printer reach my laptop but my laptop can't ping the printer?
How do I switch from Zephra to Brightline Broadband? ~~ How do I switch from Brightline Broadband to Zephra?
How do I forward traffic from port 80 to port 8080 on the hub? ~~ How do I forward traffic from port 8080 to port 80 on the hub?
How do I move my account from my housemate's name to mine? ~~ How do I move my account from my name to my housemate's?
How do I copy files from my NAS to my laptop over wifi? ~~ How do I copy files from my laptop to my NAS over wifi?
Can I downgrade from Fibre 900 to Fibre 500 mid-contract? ~~ Can I upgrade from Fibre 500 to Fibre 900 mid-contract?
I was charged after cancelling, how do I get Zephra to pay me back? ~~ Zephra refunded me too much after cancelling, how do I pay them back?

@utilities
How do I switch from Pondera to Voltwise? ~~ How do I switch from Voltwise to Pondera?
My old tenant's bill is in my name, how do I move it to theirs? ~~ My bill is in my old tenant's name, how do I move it to mine?
My final bill says I owe Pondera 80, how do I pay it? ~~ My final bill says Pondera owes me 80, how do I get it?
How do I switch from a prepayment meter to a credit meter? ~~ How do I switch from a credit meter to a prepayment meter?
How do I move the energy account from my late husband's name into mine? ~~ How do I move the energy account from my name into my husband's?
How do I move from a variable tariff to a fixed one? ~~ How do I move from a fixed tariff to a variable one?
How do I sell electricity from my solar panels to the grid? ~~ How do I buy cheap electricity from the grid to charge my home battery?
How do I convert kWh to cubic metres for my gas reading? ~~ How do I convert cubic metres to kWh for my gas reading?

@tax
How is tax calculated on money I send from the UK to my parents in India? ~~ How is tax calculated on money my parents in India send to me in the UK?
Do I pay tax on a gift I give my son? ~~ Do I pay tax on a gift my son gives me?
How do I convert my income from dollars to pounds for my tax return? ~~ How do I convert my income from pounds to dollars for my tax return?
How do I pay money I owe to the tax office from abroad? ~~ How do I receive a refund from the tax office while I'm abroad?
Can I transfer my unused personal allowance to my wife? ~~ Can my wife transfer her unused personal allowance to me?
Do I pay tax on interest my friend pays me on a loan? ~~ Can I get tax relief on interest I pay my friend on a loan?
How is tax handled when I move from employment to self-employment? ~~ How is tax handled when I move from self-employment to employment?
What tax do I pay when I sell a house to my daughter? ~~ What tax do I pay when I buy a house from my daughter?

@travel_bookings
How much is a flight from London to Rome? ~~ How much is a flight from Rome to London?
How do I get from the airport to my hotel in Madrid? ~~ How do I get from my hotel to the airport in Madrid?
When it's 9am in New York, what time is it in Tokyo? ~~ When it's 9am in Tokyo, what time is it in New York?
Can I change my booking from a double room to a twin room? ~~ Can I change my booking from a twin room to a double room?
Do I need a visa to travel from Canada to the US? ~~ Do I need a visa to travel from the US to Canada?
How do I transfer my booking from my name to my friend's? ~~ How do I transfer my friend's booking to my name?
Is there a train from Paris to Brussels in the morning? ~~ Is there a train from Brussels to Paris in the morning?
Can I upgrade from economy to premium on Voyaro? ~~ Can I downgrade from premium to economy on Voyaro?

@airline_baggage
Will my bag be transferred from Brisa to my connecting Solent Airways flight? ~~ Will my bag be transferred from Solent Airways to my connecting Brisa flight?
Can I move weight from my checked bag to my cabin bag? ~~ Can I move weight from my cabin bag to my checked bag?
Can I take duty free from Dubai to London? ~~ Can I take duty free from London to Dubai?
Can I bring cheese from France into the UK? ~~ Can I bring cheese from the UK into France?
How do I convert my bag allowance from kilograms to pounds? ~~ How do I convert my bag allowance from pounds to kilograms?
Can I bring meat from the US into Australia? ~~ Can I bring meat from Australia into the US?
My bag was sent from Rome to Malaga by mistake, how do I get it back? ~~ My bag was sent from Malaga to Rome by mistake, how do I get it back?
Can I transfer my extra bag allowance to my wife's booking? ~~ Can my wife transfer her extra bag allowance to my booking?

@ecommerce_orders
Who pays return shipping, me or Cartwell? ~~ Who pays outbound shipping, me or Cartwell?
How do I exchange a medium for a large? ~~ How do I exchange a large for a medium?
How do I ship an order from the UK to Germany? ~~ How do I ship an order from Germany to the UK?
Can I transfer my store credit to my sister? ~~ Can my sister transfer her store credit to me?
How do I sell my used items to Cartwell? ~~ How do I buy used items from Cartwell?
How do I move items from my basket to my wishlist? ~~ How do I move items from my wishlist to my basket?
The seller says I owe them postage, is that right? ~~ I think the seller owes me postage, how do I claim it?
How do I convert my gift card balance to store credit? ~~ How do I convert my store credit to a gift card?

@subscriptions_streaming
How do I switch from monthly to annual billing on Fennix? ~~ How do I switch from annual to monthly billing on Fennix?
How do I move my playlists from Tandlo to Soundmere? ~~ How do I move my playlists from Soundmere to Tandlo?
How do I transfer my profile from my old account to my new one? ~~ How do I transfer my profile from my new account back to my old one?
Can I cast from my phone to my TV? ~~ Can I cast from my TV to my phone?
How do I change from the family plan to an individual plan? ~~ How do I change from an individual plan to the family plan?
My sister is paying for my account, how do I take over billing? ~~ I'm paying for my sister's account, how do I hand billing over to her?
How do I transfer my Fennix gift card balance to my friend? ~~ How does my friend transfer their Fennix gift card balance to me?
How do I switch from the ad-supported plan to ad-free? ~~ How do I switch from the ad-free plan to ad-supported?

@hr_payroll
I was overpaid, do I owe the company money? ~~ I was underpaid, does the company owe me money?
How do I transfer from the London office to Manchester? ~~ How do I transfer from the Manchester office to London?
How do I move from part-time to full-time? ~~ How do I move from full-time to part-time?
Can I transfer holiday days to a colleague? ~~ Can a colleague transfer holiday days to me?
How do I move my pension from my old employer into the company scheme? ~~ How do I move my pension from the company scheme to my new employer?
Does the company reimburse me for training I paid for myself? ~~ Do I reimburse the company for training it paid for if I leave?
How do I convert my hourly rate to an annual salary? ~~ How do I convert my annual salary to an hourly rate?
How do I switch from a contractor to an employee? ~~ How do I switch from an employee to a contractor?

@it_helpdesk
How do I transfer files from my old laptop to my new one? ~~ How do I transfer files from my new laptop back to my old one?
How do I forward emails from my work account to my personal email? ~~ How do I forward emails from my personal account to my work email?
How do I copy data from the shared drive to my personal cloud folder? ~~ How do I copy data from my personal cloud folder to the shared drive?
How do I convert a Word document to PDF? ~~ How do I convert a PDF to a Word document?
How do I sync my work calendar to my personal phone? ~~ How do I sync my personal calendar to my work Outlook?
How do I delegate my calendar to my assistant? ~~ How does my assistant delegate their calendar to me?
How do I switch from Windows to macOS for my work laptop? ~~ How do I switch from macOS to Windows for my work laptop?
How do I give my colleague access to my mailbox? ~~ How do I get access to my colleague's mailbox?

@rental_housing
Can I claim compensation from my landlord for damage to my belongings from a leak? ~~ Can my landlord claim compensation from me for damage from a leak I caused?
My landlord owes me for repairs I paid for, how do I get it back? ~~ I owe my landlord for repairs, how do I pay it back?
How do I transfer my tenancy to my partner? ~~ How do I transfer my partner's tenancy to me?
Can I move from a joint tenancy to a sole tenancy? ~~ Can I move from a sole tenancy to a joint tenancy?
How do I move my deposit from my old flat to my new one with the same agent? ~~ How do I move my deposit from my new flat back to my old one?
My flatmate owes me rent, what can I do? ~~ I owe my flatmate rent, what can I do?
Can I convert my fixed-term tenancy into a periodic one? ~~ Can I convert my periodic tenancy into a fixed-term one?
Can my landlord charge me for cleaning when I move out? ~~ Can I charge my landlord for cleaning when I move in?

@healthcare_admin
How do I get my records from my overseas doctor sent to my UK GP? ~~ How do I get my UK GP records sent to my overseas doctor?
How do I switch from Halcyon to another insurer? ~~ How do I switch from another insurer to Halcyon?
How do I move my prescription from the pharmacy to home delivery? ~~ How do I move my prescription from home delivery to a pharmacy?
How do I change from an NHS dentist to a private one? ~~ How do I change from a private dentist to an NHS one?
Can I move my Halcyon cover from my employer's scheme to a personal policy? ~~ Can I move my Halcyon cover from a personal policy to my employer's scheme?
How do I convert my weight from stones to kilograms for the form? ~~ How do I convert my weight from kilograms to stones for the form?
How do I add my wife to my health plan? ~~ How do I add myself to my wife's health plan?
My clinic owes me a refund, how do I get it? ~~ I owe my clinic money, how do I pay it?

@education_admin
How do I transfer from Stoneleigh to another university? ~~ How do I transfer from another university to Stoneleigh?
How do I switch from full-time to part-time study? ~~ How do I switch from part-time to full-time study?
How do I switch from the evening cohort to the day cohort? ~~ How do I switch from the day cohort to the evening cohort?
How do I move from the BSc to the MSci? ~~ How do I move from the MSci to the BSc?
How do I convert my GPA to a UK grade? ~~ How do I convert my UK grade to a GPA?
How do I transfer credits from Stoneleigh to another college? ~~ How do I transfer credits from another college to Stoneleigh?
How do I move my son from a state school to a private school? ~~ How do I move my son from a private school to a state school?
How do I change my major from history to law? ~~ How do I change my major from law to history?

@cooking
How do I convert cups to grams? ~~ How do I convert grams to cups?
How do I convert Fahrenheit to Celsius for my oven? ~~ How do I convert Celsius to Fahrenheit for my oven?
How do I swap butter for oil in a cake? ~~ How do I swap oil for butter in a cake?
How do I adapt a slow cooker recipe to the oven? ~~ How do I adapt an oven recipe to the slow cooker?
How do I convert fresh yeast to dried yeast? ~~ How do I convert dried yeast to fresh yeast?
How do I substitute fresh herbs for dried? ~~ How do I substitute dried herbs for fresh?
How do I convert tablespoons to millilitres? ~~ How do I convert millilitres to tablespoons?
How do I adapt a fan oven temperature for a conventional oven? ~~ How do I adapt a conventional oven temperature for a fan oven?

@general_knowledge
What time is it in Sydney when it's midnight in London? ~~ What time is it in London when it's midnight in Sydney?
How do I convert miles to kilometres? ~~ How do I convert kilometres to miles?
How do I convert Celsius to Kelvin? ~~ How do I convert Kelvin to Celsius?
Who succeeded Henry VIII? ~~ Who did Henry VIII succeed?
What did the Romans inherit from the Greeks? ~~ What did the Greeks inherit from the Romans?
How do I convert pounds to kilograms in my head? ~~ How do I convert kilograms to pounds in my head?
Does blood flow from the heart to the lungs through arteries? ~~ Does blood flow from the lungs to the heart through veins?
Which English words come from French? ~~ Which French words come from English?

@programming
How do I convert a string to an integer in Python? ~~ How do I convert an integer to a string in Python?
How do I convert a list to a dictionary in Python? ~~ How do I convert a dictionary to a list in Python?
How do I copy a file from my local machine to a remote server with scp? ~~ How do I copy a file from a remote server to my local machine with scp?
How do I merge main into my feature branch? ~~ How do I merge my feature branch into main?
How do I convert JSON to a JavaScript object? ~~ How do I convert a JavaScript object to JSON?
How do I cast a float to an int in Java? ~~ How do I cast an int to a float in Java?
How do I map a port from the host to a Docker container? ~~ How do I reach a port on the host from inside a Docker container?
How do I convert a pandas DataFrame to a NumPy array? ~~ How do I convert a NumPy array to a pandas DataFrame?
How do I migrate from MySQL to PostgreSQL? ~~ How do I migrate from PostgreSQL to MySQL?

@personal_finance
Should I move money from my ISA to my pension? ~~ Should I move money from my pension to my ISA?
Should I lend money to my brother to pay off his card? ~~ Should I borrow money from my brother to pay off my card?
How do I transfer my pension from the UK to Australia? ~~ How do I transfer my pension from Australia to the UK?
Should I switch from a fixed mortgage to a tracker? ~~ Should I switch from a tracker mortgage to a fixed one?
How do I convert my savings from dollars to euros cheaply? ~~ How do I convert my savings from euros to dollars cheaply?
My ex owes me money from our joint loan, what can I do? ~~ I owe my ex money from our joint loan, what can I do?
Should I move my emergency fund from savings into index funds? ~~ Should I move money from index funds into my emergency fund?
How do I transfer shares from my name to my wife's? ~~ How do I transfer shares from my wife's name to mine?
'''
