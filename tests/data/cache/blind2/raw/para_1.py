# Hand-written paraphrase pairs (same_answer = true), part 1.
# Format: "@domain" header lines, then "stored question ~~ new question".
CATEGORY = "paraphrase"
DATA = r'''
@retail_banking
What's the daily ATM withdrawal limit on a Quillfield current account? ~~ How much cash can I take out of a cash machine in one day with my Quillfield checking account?
How do I set up a standing order? ~~ what are the steps to create a recurring fixed payment to someone from my account
Can I open a joint account online or do I need to visit a branch? ~~ Is it possible to set up a shared account with my partner without going into a branch?
How long does an international wire transfer take to arrive? ~~ If I send money abroad by wire, how many days until the recipient actually gets it?
Where can I find my IBAN? ~~ i need my international bank account number for a payment, where is it shown
How do I change the address on my bank account? ~~ I moved house. How do I update where the bank sends my post?
What is the overdraft fee at Quillfield Bank? ~~ How much does Quillfield charge when my account goes below zero?
How do I reset my online banking password? ~~ forgot my login for internet banking, how do i get back in
Is there a monthly fee for the Quillfield Everyday account? ~~ Does the Everyday account come with any maintenance charge each month?
How can I get a bank statement for the last three months? ~~ My landlord wants proof of my transactions from the past 3 months, how do I get that from you?
What's the cut-off time for same-day transfers? ~~ By what time of day do I need to send a payment for it to go out today?
How do I add a new payee in the Quillfield app? ~~ In the phone app, where do I save a new person to send money to?
How do I close my savings account? ~~ I'd like to shut down my savings account with you, what do I need to do?
Can I deposit a cheque using my phone? ~~ Is it possible to pay in a check just by taking a photo of it with the app?
What ID do I need to open an account? ~~ Which documents should I bring to prove who I am when opening an account?
How do I freeze my account if my phone is stolen? ~~ My phone got nicked and it has my banking app on it. How do I lock everything down?
What's the current interest rate on the Easy Saver account? ~~ How much interest does Easy Saver pay at the moment, as a percentage?
What details do I give my employer so my salary goes into my new account? ~~ My job needs to pay my wages into the account I just opened, what info do they need from me?
Why was my bank transfer declined? ~~ The payment I tried to send got rejected, what could be the reason?
How do I turn on two-step verification for online banking? ~~ Where do I enable the extra security code when logging into web banking?
How do I cancel a direct debit? ~~ What's the way to stop a company from pulling regular payments out of my account?
How often is interest paid on Quillfield savings accounts? ~~ When do you actually credit the interest on savings, monthly or yearly?
Someone called claiming to be from Quillfield and asked for my PIN, what should I do? ~~ I just had a phone call from a person pretending to be the bank who wanted my PIN number. What do I do now?
How long does it take to open a current account? ~~ From applying to actually being able to use it, how quick is opening a checking account with you?
Can I add my husband to my existing account? ~~ Is it possible to turn my sole account into one I share with my spouse?
Is my money protected if the bank goes bust? ~~ If Quillfield collapsed, would my deposits be safe?
How do I order a new chequebook? ~~ where can i request another book of checks
What is Quillfield Bank's sort code? ~~ Which branch code do I give people when they want to pay into my Quillfield account?
Can I increase my arranged overdraft? ~~ I'd like a bigger overdraft limit, is that something I can apply for?
How do I get a text alert when my balance is low? ~~ I want my phone to ping me whenever my account drops under a certain amount. How do I set that up?
If I pay cash in at a branch on Saturday, when will it show in my account? ~~ Cash deposited over the counter at the weekend, on a Saturday, how soon is it available?
How do I switch my current account to Quillfield from another bank? ~~ I want to move my everyday banking over to you from my old bank, how does the switching work?
Can I use Quillfield online banking from abroad? ~~ Will I still be able to log in to my bank account while I'm living overseas?
How do I get a letter confirming my account details? ~~ I need an official bank letter showing my account number and name for a new job. How do I request one?
What's the maximum I can transfer online in one day? ~~ Is there a cap on how much money I can send through internet banking per day?
How do I stop a cheque I've already written? ~~ I wrote a check but need to cancel it before it's cashed, how?

@cards_payments
What's the foreign transaction fee on the Ambry credit card? ~~ If I use my Ambry card overseas, how much extra do you charge on each purchase?
How do I activate my new credit card? ~~ Just got the new card in the post, what do I need to do before I can use it?
How do I increase my credit limit? ~~ I want to be able to spend more on my card each month, how do I ask for a higher limit?
Why was my card declined at the supermarket? ~~ My card got refused at the grocery store checkout today even though I have money, why would that happen?
How do I add my Ambry card to my phone wallet? ~~ I want to tap to pay with my phone, how do I load my Ambry card onto it?
What is the contactless spending limit? ~~ Up to what amount can I just tap my card without putting in a PIN?
I've lost my credit card, how do I report it? ~~ Cant find my card anywhere, how do I tell you so no one else can use it
Is there an annual fee for the Ambry Platinum card? ~~ Does it cost anything per year to hold the Platinum card from Ambry?
How do I withdraw cash with my credit card? ~~ What's the process for getting a cash advance from an ATM on my credit card?
What is the APR on purchases for the Ambry card? ~~ What yearly interest rate applies if I carry a balance on things I buy with my Ambry card?
How long does a refund take to appear on my card? ~~ A shop said they've refunded me, when will the money actually come back onto my credit card?
How do I set up automatic payments for my card balance? ~~ Can my bank account pay off the card bill each month without me doing anything? How do I arrange that?
How do I transfer a balance from another card to Ambry? ~~ I want to move my debt from a different credit card onto my Ambry one, what's the process?
Can I choose my own card PIN? ~~ is it possible to pick the 4 digits for my pin myself
What does pending mean on my card transactions? ~~ Some purchases in the app say "pending" instead of posted. What's that status?
How do I get a virtual card number for online shopping? ~~ Where can I create a temporary card number to use on websites instead of my real one?
How do I add an additional cardholder to my account? ~~ I'd like my daughter to have her own card linked to my credit account, how do I set that up?
How many reward points do I earn per dollar spent? ~~ What's the points earning rate on card purchases?
How do I redeem my reward points? ~~ what can i do to cash in the points ive built up on my card
Why was I charged interest when I paid my full balance? ~~ I cleared the whole statement amount but still got an interest charge, how come?
How do I temporarily freeze my card? ~~ Is there a way to pause my card for a few days without cancelling it completely?
How is the minimum payment on my card calculated? ~~ What decides the smallest amount I have to pay off my credit card every month?
Do I need to tell you before I travel abroad with my card? ~~ Should I notify Ambry about a trip overseas so my card isn't blocked?
A merchant never delivered my order and won't refund me, how do I get a chargeback? ~~ The seller took my money, sent nothing, and is ignoring me. Can my card provider reverse the payment, and how do I start that?
How do I close my credit card account? ~~ I want to cancel my Ambry card for good, what's the procedure?
Will applying for a credit card affect my credit score? ~~ Does putting in a card application leave a mark on my credit file?
Where do I find the CVV on my card? ~~ where is the 3 digit security code printed on a card
How long does a replacement card take to arrive? ~~ After ordering a new card, how many days until it turns up in the mail?
Why is there a small temporary charge on my card from the petrol station? ~~ The gas pump put a hold on my card for a weird amount before I even filled up, what's that about?
Can I pay my credit card bill with another credit card? ~~ Is it allowed to use one credit card to pay off the balance on a different one?
What happens if I miss a credit card payment? ~~ I forgot to pay my card this month, what are the consequences?
How do I change the billing address on my card? ~~ My card statements still go to my old address, how do I update it?
Why does my available credit not match my limit minus my balance? ~~ The available-to-spend number in the app is lower than what my limit and balance would suggest, why?
How do I dispute a duplicate charge on my card? ~~ A restaurant billed me twice for the same meal, how do I get one of the charges removed?
Can I get a card with my photo on it? ~~ Do you offer credit cards that have my picture printed on the front?

@insurance_claims
How do I make a claim on my Mirevale home insurance? ~~ Something's been damaged at my house and I want Mirevale to cover it. What's the process for claiming?
What's the excess on my car insurance policy? ~~ How much do I have to pay out of pocket before the insurer covers a car claim?
How long does it take to process a claim? ~~ Once I've submitted a claim, how long until you make a decision on it?
Does my travel insurance cover a cancelled flight? ~~ If the airline cancels my flight, will my travel policy pay out?
How do I add a named driver to my car insurance? ~~ I want my son to be able to drive my car too, how do I get him put on the policy?
What documents do I need for a theft claim? ~~ My bike was stolen from outside. What paperwork do you need from me to claim for it?
Will making a claim increase my premium? ~~ If I claim this year, will my renewal price go up?
How do I cancel my Mirevale policy? ~~ I'd like to stop my insurance with Mirevale, how do I go about ending it?
Does contents insurance cover accidental damage? ~~ If I accidentally knock my TV off the stand, is that covered under contents cover?
How can I check the status of my claim? ~~ where can i see how far along my claim is
What is a no-claims bonus? ~~ can someone explain the discount you get for going years without claiming
Can I pay my insurance premium monthly? ~~ Is there an option to spread the cost of my policy over monthly instalments rather than paying it all at once?
Does Mirevale pet insurance cover dental treatment? ~~ Will my pet policy pay if my dog needs work on his teeth?
How do I get a copy of my policy documents? ~~ I've lost the paperwork for my insurance, can you send it to me again?
Do I need to tell my insurer about an accident if I'm not claiming? ~~ Should I still report a minor bump to Mirevale even though I don't want to make a claim?
How long do I have to make a claim after an incident? ~~ What's the deadline for reporting a claim after something happens?
Will someone come to inspect the damage to my house? ~~ For a home claim, do you send an assessor out to look at the damage in person?
Is my phone covered by home insurance if I lose it outside the house? ~~ If my mobile goes missing while I'm out, would my home policy pay for it?
How do you calculate the payout if my car is written off? ~~ If my car is declared a total loss, how do you decide how much money I get?
Can I use my own garage for repairs after a claim? ~~ Am I allowed to take the car to a mechanic I choose, rather than one of yours, for claim repairs?
What's the difference between comprehensive and third-party cover? ~~ how does fully comp differ from third party only insurance
How do I update my address on my insurance policy? ~~ I've moved house, how do I tell Mirevale where I live now?
Am I covered to drive other people's cars? ~~ Does my car policy let me drive a friend's vehicle with insurance?
How do I claim for a cracked windscreen? ~~ There's a crack across my windshield, how do I get it repaired through my insurance?
How soon will I get my refund after cancelling my policy? ~~ I've cancelled my insurance, how long before the leftover premium is paid back to me?
What should I do right after a car accident? ~~ I've just been in a crash and I'm ok, what are the first things I need to do for insurance purposes?
Does home insurance cover damage from a burst pipe? ~~ A pipe burst and water came through the ceiling. Is that the kind of thing home insurance pays for?
Why was my claim rejected? ~~ Mirevale turned down my claim, how can I find out the reason?
How do I appeal a declined claim? ~~ I think my claim was wrongly refused, what's the process to challenge the decision?
Do I need a police report to claim for a burglary? ~~ Is a crime reference number required if I'm claiming after a break-in?
Will my insurance pay for a hire car while mine is repaired? ~~ Do I get a courtesy vehicle while my car is in the garage after a claim?
Can I change my policy start date? ~~ Is it possible to move the date my cover begins?
Are my bikes covered under home contents? ~~ Does contents insurance include bicycles kept at home?
How do I send photos of the damage for my claim? ~~ Where can I upload pictures of the damage to support my claim?
What is covered under legal expenses cover? ~~ what does the legal expenses add-on actually pay for

@telecom_mobile
How do I check how much data I've used this month? ~~ where can i see how many gigs ive gone through so far this month
How do I move my number to Orvane? ~~ I'm switching to Orvane and want to keep my current phone number, what do I need to do?
How much does roaming cost in Europe on Orvane? ~~ What will I be charged for using my phone while travelling around Europe?
How do I unlock my phone to use another network's SIM? ~~ My handset is locked to Orvane, how do I get it freed up so other SIM cards work?
How do I set up an eSIM on my phone? ~~ I've got a QR code for an e-SIM, how do I activate it on the handset?
Why is my phone bill higher than usual this month? ~~ This month's bill is way more than I normally pay, what could explain it?
How do I set up my voicemail? ~~ how do i turn on the answerphone on my mobile
Can I keep my number if I leave Orvane? ~~ If I cancel my Orvane contract, is it possible to take my mobile number with me to another provider?
How do I buy extra data? ~~ I've run out of data before the month ended, how can I add more?
When does my mobile contract end? ~~ how do i find out the end date of my phone contract
How do I block a number from calling me? ~~ Someone keeps ringing me, how do I stop their calls getting through?
Is 5G included on my plan? ~~ Does my tariff give me access to 5G?
How do I turn on wifi calling? ~~ How do I make calls over wi-fi when I have no mobile signal indoors?
How do I get a replacement SIM card? ~~ My sim is damaged and won't read, how do I get a new one sent out?
How much does it cost to call international numbers on Orvane? ~~ what are the rates for ringing abroad from my orvane phone
How do I turn off data roaming? ~~ I'm going overseas and don't want to use mobile data there, how do I disable it?
Can I share my data allowance with my family? ~~ Is there a way to split the data on my plan between my phone and my family members' phones?
What are the ways I can pay my Orvane bill? ~~ how can i pay orvane, what payment methods do you accept
Can I upgrade my phone before my contract ends? ~~ Am I able to get a new handset early, before my current contract is finished?
Why do I have no signal at home? ~~ My phone shows zero bars inside my house, what could be causing that?
How do I stop premium text message charges? ~~ I'm being billed for premium SMS I never signed up for, how do I block them?
How do I top up my pay as you go SIM? ~~ how do i add credit to my payg phone
Where do I find my PUK code? ~~ My phone is asking for a PUK and I don't know it, where can I get it?
How do I transfer contacts to a new phone? ~~ got a new handset, how do i get all my saved numbers across from the old one
What happens if I go over my minutes? ~~ If I use more call time than my plan includes, how am I charged?
How do I get a bill breakdown with itemised calls? ~~ Can I see a detailed list of every call and text on my bill? How?
How do I cancel my Orvane contract? ~~ I want to leave Orvane, what's the process to end my contract?
Why can't I send picture messages? ~~ MMS isn't working on my phone, photos in texts won't send, why?
How do I set up a spending cap on my bill? ~~ I want to limit how much can be added to my bill over my plan each month, how?
Does my plan include calls to landlines? ~~ Are calls to home phone numbers part of my monthly allowance?
Is there a family discount for adding more lines? ~~ Do I get money off if I put more phones on my account?
How do I turn off my phone's hotspot? ~~ how to stop sharing my mobile internet as a hotspot
How do I report a stolen phone to Orvane? ~~ My phone was stolen last night, how do I let you know and block it?
Can I use my Orvane plan in the US? ~~ Will my Orvane phone work when I visit the United States, and is it included?

@internet_service
Why is my broadband so slow in the evenings? ~~ Every night around 8 my internet crawls, what's causing that?
How do I change my wifi password? ~~ I want to set a new password for my home wireless network, how?
Is Zephra Fiber available at my address? ~~ How can I find out if I can get Zephra at my house?
How do I restart my Zephra router? ~~ What's the correct way to reboot the Zephra hub?
What do the lights on the Zephra hub mean? ~~ Can you explain what each coloured light on the router box indicates?
How long does a fibre installation appointment take? ~~ How many hours should I set aside for the engineer to set up my fiber?
Can I use my own router with Zephra? ~~ Do I have to use your hub, or can I plug in a router I already own?
How do I set up a guest wifi network? ~~ I want a separate wireless network for visitors, how do I make one?
What speed should I be getting on my plan? ~~ How fast is my connection actually supposed to be with my package?
How do I report an internet outage? ~~ my internet is completely down, how do i let you know
How do I move my broadband to my new address? ~~ I'm moving house and want to take my Zephra service with me, how does that work?
Is there a monthly data cap on Zephra broadband? ~~ Is my home internet usage limited to a certain amount each month?
How do I get a static IP address? ~~ I need a fixed IP for my home connection, how do I request one?
Why does my wifi keep disconnecting? ~~ My wireless drops out every few minutes, why?
How can I improve wifi signal upstairs? ~~ The connection is weak in the bedrooms on the top floor, how do I boost it?
How much is the fee for cancelling my broadband contract early? ~~ What will it cost me to leave my internet contract before the minimum term is up?
How do I run a proper speed test? ~~ what's the right way to measure my broadband speed accurately
How do I set parental controls on my home internet? ~~ I want to block adult sites for the kids on our home connection, how?
How do I log into my router's admin page? ~~ What address do I type in the browser to get to the hub settings?
How do I forward a port on my Zephra router? ~~ I need to open a port for a game server, how do I do that on the Zephra hub?
Why is my wifi fast near the router but slow elsewhere? ~~ Right next to the hub I get great speed but in other rooms it's terrible, why?
Do you offer broadband without a phone line? ~~ Can I get internet from you without paying for a landline?
What should I do if the engineer didn't turn up? ~~ The installation engineer never arrived for my appointment today. What now?
How do I hide my wifi network name? ~~ Can I stop my wireless network from showing up in the list other people see? How?
How do I see which devices are connected to my wifi? ~~ where can i check what gadgets are on my network right now
Can I change my broadband package mid-contract? ~~ Am I allowed to switch to a different internet plan before my contract finishes?
Why does my internet drop when the microwave is on? ~~ Every time I use the microwave my wifi cuts out. What's going on?
How do I set up a mesh wifi system? ~~ I bought mesh extenders, how do I get them working with my broadband?
What is the upload speed on the 500 Mbps plan? ~~ On the 500 meg package, how fast are uploads?
How do I get compensation for a long outage? ~~ My broadband was off for days, am I owed money back and how do I claim it?
Is my router supposed to be switched off at night? ~~ Should I turn the wifi box off overnight, or leave it running?
How do I connect a printer to my wifi? ~~ what's the way to get my printer on the wireless network
Why does my connection say "connected, no internet"? ~~ My laptop shows it's on the wifi but there's no internet access. What does that mean?
How do I return the router when I cancel? ~~ I'm leaving Zephra, what do I do with the hub, do I send it back?
'''
