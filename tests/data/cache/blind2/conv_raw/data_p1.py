# Hand-written scenarios, part 1: banking, cards, insurance, telecom.
from convlib import sc

# ---------------------------------------------------------------- banking
sc("banking",
"""U: I have a Basic Checking account at Brightwell. Is there a monthly fee?
A: Basic Checking carries a $6 monthly maintenance fee. It's waived if your daily balance stays at or above $500.
U: What if my balance drops to $450 for one day?""",
"""U: quick q - does Brightwell charge a monthly fee on Basic Checking? that's what I've got
A: Yes, Basic Checking is $6 a month, but the fee is waived as long as you keep at least $500 in the account every day.
U: Say it goes down to $450 for a day, what happens then?""",
early=[("Basic Checking", "Premier Checking"), ("$6", "$25"), ("$500", "$15,000")],
late=[("$450", "$550")],
flip="""U: My Brightwell savings account needs $500 in it to earn interest, right?
A: Right. Brightwell Savings pays 2.0% APY only on days your balance is at least $500; below that it earns nothing for that day.""",
intent="If my balance drops to $450 for one day, how do I get the fee reversed?")

sc("banking",
"""U: I need to wire money to my sister in Portugal from my Kestrel Credit Union checking. What's the fee?
A: Outgoing international wires from Kestrel cost $45 each; intermediary banks may take a small cut too.
U: ok and is there a limit on how much I can send in one go? I was thinking $12,000.""",
"""U: what does Kestrel CU charge to wire money abroad? My sister's in Portugal, sending from checking.
A: International outgoing wires are $45 per transfer, and intermediary banks might deduct a little along the way.
U: Got it. Is there a max per transfer? I'd like to send $12,000.""",
early=[("Portugal", "Ohio"), ("Outgoing international wires", "Outgoing domestic wires"), ("$45", "$20"),
       ("intermediary banks may take a small cut too", "there are no intermediary fees on domestic wires")],
late=[("$12,000", "$4,000")],
flip="""U: Can I use Zelle from my Kestrel checking to pay my contractor?
A: Yes, Zelle is built into the Kestrel app and payments usually arrive within minutes.""",
intent="ok and how long does it take to arrive if I send $12,000?")

sc("banking",
"""U: I have a Student Checking account with Oakmere. Do I get charged for overdrafts?
A: Student Checking has no overdraft fees. Transactions that would overdraw the account are simply declined.
U: ok, and can I turn on overdraft coverage for it once I graduate next month?""",
"""U: Does Oakmere charge overdraft fees on Student Checking? That's my account.
A: No overdraft fees on Student Checking; anything that would overdraw the account just gets declined.
U: After I graduate next month, will I be able to opt in to overdraft coverage on it?""",
early=[("Student Checking", "Everyday Checking"),
       ("has no overdraft fees. Transactions that would overdraw the account are simply declined",
        "charges $34 per overdraft item, but only if you've opted in to overdraft coverage")],
late=[("once I graduate next month", "while I'm still in school")],
flip="""U: I just got a Kestrel Student Debit card that's linked to my parents' account.
A: Nice! That card draws from your parents' joint checking and has a $200 daily spending cap.""",
intent="ok, and how do I make sure overdraft coverage stays off for it after I graduate next month?")

sc("banking",
"""U: I opened a 12-month CD with Brightwell back in February. I need some of the money now.
A: You can withdraw early, but Brightwell charges a penalty of 90 days' interest on 12-month CDs.
U: how much would that be on $10,000 at 4.5%?""",
"""U: Back in February I put money in a 12-month CD at Brightwell and now I need part of it.
A: Early withdrawal is allowed; for a 12-month CD the penalty is 90 days' interest.
U: What would the penalty come to for $10,000 at 4.5%?""",
early=[("12-month CD", "5-year CD"), ("90 days' interest on 12-month CDs", "365 days' interest on 5-year CDs")],
late=[("$10,000", "$25,000")],
flip="""U: I keep my emergency fund in a Brightwell money market account.
A: Good choice. The money market currently pays 4.5% and you can make up to six withdrawals a month without a fee.""",
intent="how much interest would I have earned by now on $10,000 at 4.5%?")

sc("banking",
"""U: I joined Kestrel Credit Union about a month ago. What's my mobile deposit limit?
A: Members in their first 90 days can deposit up to $2,500 per day by mobile; after that the limit goes up to $10,000.
U: so can I deposit a $6,000 check through the app today?""",
"""U: hi, Kestrel member here (signed up about a month ago). how much can I deposit with the mobile app?
A: During your first 90 days the mobile deposit limit is $2,500 a day; it increases to $10,000 a day after that.
U: would a $6,000 check go through in the app today then?""",
early=[("about a month ago", "back in 2019")],
late=[("$6,000", "$2,000")],
flip="""U: I use the PayNest app for my side gig and it has a check deposit feature.
A: PayNest lets you deposit checks up to $5,000 per day, and funds are available in 1 to 3 business days.""",
intent="so how long until a $6,000 check deposited through the app clears?")

sc("banking",
"""U: What rate does the Oakmere Growth Savings account pay right now?
A: Growth Savings pays 3.75% APY on balances up to $25,000 and 1.00% on anything above that.
U: so if I put in $40,000, what would I earn in a year?""",
"""U: whats the current rate on Oakmere's Growth Savings?
A: It's 3.75% APY up to $25,000, then 1.00% APY on the portion above $25,000.
U: How much interest would $40,000 earn over a year then?""",
early=[("Growth Savings", "Everyday Savings"),
       ("3.75% APY on balances up to $25,000 and 1.00% on anything above that", "0.40% APY on all balances")],
late=[("$40,000", "$20,000")],
flip="""U: Oakmere is offering a 1-year CD at 4.25% APY, right?
A: Yes, the 12-month CD currently pays 4.25% APY with a $1,000 minimum deposit.""",
intent="so if I put in $40,000, how much of it would earn the higher rate?")

sc("banking",
"""U: I moved to Canada last month and want to close my Kestrel savings account. There's about $1,200 left in it.
A: You can close it by secure message or phone. The remaining balance can be sent by wire or mailed as a check to your address on file.
U: how long would the check take to reach me?""",
"""U: Hi, I relocated to Canada last month and I want to shut down my Kestrel savings account; roughly $1,200 is still in there.
A: You can close it through secure message or by calling us. We can wire the leftover balance or mail you a check at the address we have on file.
U: If it's a check, how long until it gets to me?""",
early=[("Canada", "Arizona")],
late=[("the check", "a wire")],
flip="""U: My state tax refund is coming as a paper check this year.
A: Paper state refund checks are mailed to the address on your tax return once the return is processed.""",
intent="can you send the check to my old address in the US instead?")

sc("banking",
"""U: I have the Oakmere Starter Savings account. How many withdrawals can I make per month?
A: Starter Savings allows six free withdrawals per statement cycle; each extra one costs $10.
U: I've already made 8 this month. what will I be charged?""",
"""U: On Oakmere Starter Savings, what's the monthly withdrawal limit?
A: Starter Savings gives you six free withdrawals or transfers each statement cycle, and $10 for every one beyond that.
U: So what's the charge if I've done 8 already this month?""",
early=[("Starter Savings", "Premier Savings"), ("$10", "$3")],
late=[("8", "5")],
flip="""U: Oakmere charges for using other banks' ATMs, right?
A: Yes, $3 per out-of-network ATM withdrawal, plus whatever the ATM owner charges.""",
intent="I've already made 8 this month. how do I avoid the charge next month?")

sc("banking",
"""U: I'm travelling to Japan next month with my Kestrel debit card. Will I pay fees at ATMs there?
A: Kestrel charges a 1% foreign transaction fee plus $3 per withdrawal at non-network ATMs abroad.
U: ok so if I take out ¥30,000 twice, roughly what will Kestrel charge me?""",
"""U: Going to Japan next month, taking my Kestrel debit card. Any ATM fees over there?
A: Kestrel adds a 1% foreign transaction fee, and there's a $3 charge per withdrawal at ATMs outside our network abroad.
U: Roughly what would Kestrel charge if I withdrew ¥30,000 on two separate occasions?""",
early=[("Kestrel debit card", "Kestrel Globetrotter debit card"),
       ("Kestrel charges a 1% foreign transaction fee plus $3 per withdrawal at non-network ATMs abroad.",
        "The Globetrotter card has no foreign transaction fees and reimburses up to $15 a month in ATM fees abroad.")],
late=[("twice", "five times")],
flip="""U: Can I order yen at a Kestrel branch before my trip?
A: Yes, we sell foreign cash with a flat $7.50 fee per order and a 2% markup on the exchange rate.""",
intent="ok so if I take out ¥30,000 twice, how much is that in dollars?")

# ---------------------------------------------------------------- cards
sc("cards",
"""U: I've got the Corvana Everyday card. Does it have an annual fee?
A: No, Corvana Everyday has no annual fee. It earns 1.5% cash back on all purchases.
U: how much would I get back on $2,000 of groceries?""",
"""U: Is there an annual fee on the Corvana Everyday card? That's the one I have.
A: Corvana Everyday has no annual fee, and you earn 1.5% cash back on everything.
U: What would $2,000 in grocery spending earn me?""",
early=[("Corvana Everyday", "Corvana Grocer+"),
       ("has no annual fee. It earns 1.5% cash back on all purchases",
        "has a $95 annual fee. It earns 6% back at supermarkets and 1% elsewhere")],
late=[("$2,000", "$500")],
flip="""U: I'm returning some spoiled items to FreshMart and they said they'd refund 25% of the bill.
A: Okay. FreshMart refunds go back to the original payment method within 5 days.""",
intent="how long until the cash back from $2,000 of groceries shows up?")

sc("cards",
"""U: I think I lost my Pellucid Visa at a concert last night.
A: I've frozen the card ending 4471 so no new purchases can go through. Would you like a replacement?
U: yes please. how long will the new one take?""",
"""U: pretty sure my Pellucid Visa got lost at a concert last night
A: I've placed a freeze on the card ending 4471, so it can't be used for new purchases. Shall I order a replacement?
U: Please do. When would the replacement arrive?""",
early=[("at a concert last night", "while on holiday in Spain")],
late=[("yes please.", "yes please, with expedited shipping.")],
flip="""U: My Pellucid Visa expires at the end of this month.
A: Your renewed card ending 4471 was mailed on the 3rd. Would you like me to check the delivery status?""",
intent="yes please. will the new one have a different number?")

sc("cards",
"""U: My Aster Rewards card has been open for 4 months. Can I ask for a higher limit?
A: Aster lets you request a credit limit increase online under Account > Credit Limit. Eligibility depends on account age and payment history.
U: would I be eligible right now?""",
"""U: Is a credit limit increase possible on my Aster Rewards card? I opened it 4 months ago.
A: You can request one online under Account > Credit Limit; Aster considers how long the account has been open and your payment record.
U: am I eligible at this point?""",
early=[("4 months", "3 years")],
late=[("would I be eligible right now?", "would I be eligible right now if I missed a payment last month?")],
flip="""U: Aster just announced an upgrade from Rewards to Rewards Plus for existing cardholders.
A: Yes. Accounts open at least 12 months with no late payments can upgrade to Rewards Plus without a new credit check.""",
intent="would a request right now cause a hard credit pull?")

sc("cards",
"""U: There's an $89 charge from GLOBALFIT on my Corvana card that I don't recognize at all.
A: I can help with that. We can open a dispute and put a temporary credit on your account while we investigate.
U: ok please do. how long does the dispute take?""",
"""U: I'm seeing an $89 GLOBALFIT charge on my Corvana card and I have no idea what it is.
A: Happy to help. I can open a dispute and add a temporary credit to your account while it's investigated.
U: Yes, go ahead. What's the timeline for a dispute?""",
early=[("that I don't recognize at all", "even though I cancelled my membership with them in June")],
late=[("ok please do.", "ok, but it's on my business card, not my personal one.")],
flip="""U: My Tellio phone bill has an $89 roaming charge that I think is wrong.
A: I can raise a billing dispute with our accounts team and pause collection on that amount while it's reviewed.""",
intent="ok please do. will I get a new card number?")

sc("cards",
"""U: I want to move $4,000 from another card onto my Pellucid Visa.
A: Pellucid offers 0% APR on balance transfers for 18 months, with a 3% transfer fee.
U: so what's the fee going to be?""",
"""U: thinking of transferring a $4,000 balance from a different card to my Pellucid Visa
A: Balance transfers to Pellucid get 0% APR for 18 months; the transfer fee is 3%.
U: How much would the fee be, then?""",
early=[("$4,000", "$9,000")],
late=[("so what's the fee going to be?", "so what's the fee going to be if I only move half?")],
flip="""U: I'm paying my $4,000 tuition with my Pellucid Visa.
A: Okay. The university's payment portal adds a 2.5% convenience fee for card payments.""",
intent="so how much would I pay in interest after the 18 months?")

sc("cards",
"""U: Does the Aster Cashback card charge foreign transaction fees?
A: Yes, Aster Cashback adds a 3% foreign transaction fee on purchases made abroad or with foreign merchants.
U: I'm spending about €800 in Italy. roughly how much extra is that?""",
"""U: are there foreign transaction fees on Aster Cashback?
A: There are. Aster Cashback charges 3% on any purchase made abroad or processed by a foreign merchant.
U: So on roughly €800 of spending in Italy, what's the extra cost?""",
early=[("Aster Cashback card", "Aster Voyager card"),
       ("Yes, Aster Cashback adds a 3% foreign transaction fee on purchases made abroad or with foreign merchants.",
        "No, Aster Voyager has no foreign transaction fees on purchases abroad.")],
late=[("€800", "€2,500")],
flip="""U: I'm buying euros at the airport currency exchange with my Aster card before the trip.
A: That's treated as a cash advance: a 5% fee (minimum $10) and interest from day one.""",
intent="I'm spending about €800 in Italy. should I pay in euros or dollars at the terminal?")

sc("cards",
"""U: I missed my Corvana card payment due on the 5th. It's the 9th today.
A: I see the missed minimum payment of $35. A late fee of $29 has been added since the payment is past due.
U: if I pay today, will it hurt my credit score?""",
"""U: Missed my Corvana payment. It was due on the 5th and today's the 9th.
A: Your minimum payment of $35 is past due, and a $29 late fee has been applied.
U: Would paying it today damage my credit score?""",
early=[("It's the 9th today.", "It's been 40 days now.")],
late=[("if I pay today", "if I pay next month")],
flip="""U: I'm about to pay off my Corvana card in full and close the account.
A: Your current balance is $1,860; once it's paid you can request closure.""",
intent="if I pay today, can the late fee be waived?")

sc("cards",
"""U: I have 48,000 Aster points. What can I get with them?
A: Aster points are worth 1 cent each as a statement credit, or 1.25 cents each when booked through Aster Travel.
U: so how much is that toward a flight?""",
"""U: What can 48,000 Aster points get me?
A: As a statement credit each point is worth 1 cent; booked through Aster Travel they're worth 1.25 cents.
U: What would that be worth for a flight?""",
early=[("48,000", "20,000")],
late=[("so how much is that toward a flight?", "I'll only use 30,000 of them. how much is that toward a flight?")],
flip="""U: My friend has 48,000 miles with Skyline Air.
A: Skyline miles are typically worth about 1.4 cents each on award flights.""",
intent="so how many of those would I need for a $900 flight?")

sc("cards",
"""U: Can I add my daughter as an authorized user on my Pellucid card? She's 16.
A: Yes, Pellucid allows authorized users aged 13 and up. There's no fee to add one.
U: will it help build her credit?""",
"""U: my daughter is 16, could she be an authorized user on my Pellucid card?
A: She could; Pellucid accepts authorized users 13 and older and doesn't charge to add them.
U: Would that help her build a credit history?""",
early=[("She's 16.", "She's 19.")],
late=[("will it help build her credit?", "will it help build her credit once she turns 18 next year?")],
flip="""U: My daughter is applying for her own Pellucid Student card.
A: Great. Student card applicants need to be 18 and have some income; there's no annual fee.""",
intent="will it hurt my credit if she overspends?")

# ---------------------------------------------------------------- insurance
sc("insurance",
"""U: A shopping cart dented my car door in a parking lot. I have Verity Auto with a $500 collision deductible.
A: Sorry to hear that. Damage from a shopping cart is usually handled under comprehensive or collision, depending on your policy terms.
U: the body shop quoted $650. is it worth filing a claim?""",
"""U: someone's shopping cart dented my door in a parking lot. I'm with Verity Auto, collision deductible is $500.
A: Sorry about that. Verity would normally treat shopping-cart damage under comprehensive or collision, depending on your policy.
U: Body shop says $650 to fix it. Should I even bother with a claim?""",
early=[("$500", "$1,000")],
late=[("$650", "$2,400")],
flip="""U: My windshield got a crack from a rock on the highway. I'm with Verity Auto.
A: Verity covers glass under comprehensive: no deductible for chip repairs and $100 for a full replacement.""",
intent="the body shop quoted $650. will filing a claim raise my premium?")

sc("insurance",
"""U: I bought Copperleaf trip insurance for my Lisbon trip. I have to cancel because my mom is in the hospital.
A: I'm sorry about your mom. Trip cancellation for a close family member's hospitalization is a covered reason under Copperleaf's standard plan.
U: I paid $2,300 in nonrefundable costs. how much can I get back?""",
"""U: My mom's been hospitalized so I need to cancel my Lisbon trip. I have Copperleaf trip insurance.
A: I'm so sorry. Under Copperleaf's standard plan, cancelling because a close family member is hospitalized is covered.
U: How much could I recover? $2,300 of what I paid is nonrefundable.""",
early=[("because my mom is in the hospital", "because my work schedule changed"),
       ("I'm sorry about your mom. Trip cancellation for a close family member's hospitalization is a covered reason under Copperleaf's standard plan.",
        "Understood. A change in work schedule isn't a covered reason under Copperleaf's standard plan unless you added Cancel For Any Reason.")],
late=[("$2,300", "$4,100")],
flip="""U: My Lisbon hotel says they can move my booking instead of cancelling it.
A: If you rebook within 12 months they'll waive the change fee, but any price difference applies.""",
intent="I paid $2,300 in nonrefundable costs. how long until I get it back?")

sc("insurance",
"""U: A pipe burst under my kitchen sink and soaked the floor. I'm with Haldane Mutual homeowners.
A: Sudden and accidental water discharge from a burst pipe is generally covered under Haldane's HO-3 policy, minus your deductible.
U: my deductible is $1,000 and the repair estimate is $3,800. what would they pay?""",
"""U: We had a burst pipe under the kitchen sink and the floor got soaked. Our homeowners policy is with Haldane Mutual.
A: Haldane's HO-3 policy typically covers sudden, accidental water damage like a burst pipe, less your deductible.
U: Estimate came in at $3,800 and we have a $1,000 deductible. How much would Haldane cover?""",
early=[("A pipe burst under my kitchen sink and soaked the floor", "Groundwater seeped into my basement after heavy rain"),
       ("Sudden and accidental water discharge from a burst pipe is generally covered",
        "Flooding from groundwater or surface water generally isn't covered")],
late=[("$3,800", "$900")],
flip="""U: I'm getting quotes to replace the old roof on my Haldane-insured house.
A: Replacing an aging roof is maintenance, so it isn't covered, though Haldane gives a 5% premium discount once a new roof is installed.""",
intent="my deductible is $1,000 and the repair estimate is $3,800. will this claim raise my premium?")

sc("insurance",
"""U: I just enrolled my dog in Copperleaf pet insurance on Monday.
A: Welcome! Copperleaf has a 14-day waiting period for illnesses and a 2-day waiting period for accidents.
U: he cut his paw on glass today (Thursday). is that covered?""",
"""U: enrolled my dog with Copperleaf pet insurance on Monday
A: Thanks for joining! There's a 2-day wait before accidents are covered and 14 days for illnesses.
U: Today's Thursday and he just cut his paw on some glass. Would that be covered?""",
early=[("on Monday", "yesterday")],
late=[("he cut his paw on glass today (Thursday)", "he's had an ear infection since yesterday (Wednesday)")],
flip="""U: My own dog is covered by Copperleaf, but I'm looking after my brother's dog this week.
A: Copperleaf only covers pets that are named on your policy.""",
intent="he cut his paw on glass today (Thursday). how do I submit the vet bill?")

sc("insurance",
"""U: I have a Haldane term life policy and I just got married.
A: Congratulations! Would you like to update anything on your policy?
U: how do I add my wife as beneficiary?""",
"""U: Got married recently! I've got a term life policy with Haldane.
A: Congratulations! Is there something on the policy you'd like to change?
U: yes, what's the process for naming my wife as the beneficiary?""",
early=[("term life policy", "group life policy through my employer")],
late=[("my wife", "my wife and my two young kids")],
flip="""U: I'm opening a Brightwell savings account and they asked about a payable-on-death beneficiary.
A: A POD beneficiary receives the account balance directly if you pass away, without going through probate.""",
intent="how do I remove my ex-wife as beneficiary?")

sc("insurance",
"""U: My son just got his driver's license. He's 17. We have Verity Auto.
A: Congrats to him! Verity requires all licensed household drivers to be listed on the policy.
U: how much will our premium go up?""",
"""U: Our 17-year-old son just passed his driving test. We're Verity Auto customers.
A: Congratulations to him! Verity needs every licensed driver in the household listed on the policy.
U: What kind of premium increase should we expect?""",
early=[("17", "25")],
late=[("how much will our premium go up?", "how much will our premium go up if he finishes the Verity safe-driver course?")],
flip="""U: We had an at-fault accident last month. My wife was driving.
A: I see the claim. At-fault accidents usually affect your rate at the next renewal.""",
intent="will our premium go down once he's away at college?")

sc("insurance",
"""U: I have the Copperleaf Dental Basic plan. Does it cover crowns?
A: Dental Basic covers crowns at 50% after a 12-month waiting period. Preventive care is covered at 100%.
U: my dentist quoted $1,400 for a crown. I've had the plan for 2 years. what would I pay?""",
"""U: Are crowns covered under Copperleaf Dental Basic? That's my plan.
A: Yes. Dental Basic pays 50% for crowns once you've been on the plan 12 months, and preventive care at 100%.
U: My dentist wants $1,400 for a crown and I've been on the plan 2 years. What's my out-of-pocket?""",
early=[("Dental Basic", "Dental Plus"), ("covers crowns at 50% after a 12-month waiting period", "covers crowns at 80% with no waiting period")],
late=[("I've had the plan for 2 years", "I've had the plan for 8 months")],
flip="""U: I'm uninsured, but my dentist offers an in-house membership plan for $300 a year.
A: Those plans typically give about 20% off major work like crowns.""",
intent="my dentist quoted $1,400 for a crown. I've had the plan for 2 years. do I need pre-approval?")

sc("insurance",
"""U: My bike was stolen from outside my office. I have Haldane renters insurance with a $250 deductible.
A: Sorry to hear it. Haldane renters policies cover personal property stolen away from home, subject to your deductible.
U: the bike cost $1,100. how much would I get?""",
"""U: someone stole my bike outside work. I'm covered by Haldane renters insurance, $250 deductible.
A: That's rotten luck. Haldane renters policies do cover belongings stolen away from home, minus your deductible.
U: It was a $1,100 bike. What would the payout be?""",
early=[("$250", "$500")],
late=[("$1,100", "$600")],
flip="""U: I'm selling my old bike on a marketplace and the buyer offered 60% of what I paid.
A: That's about typical for a two-year-old bike in good condition.""",
intent="the bike cost $1,100. do I need the receipt to claim?")

sc("insurance",
"""U: My luggage didn't arrive in Denver and I have Copperleaf travel insurance.
A: Sorry! Copperleaf's baggage delay benefit reimburses essential purchases up to $100 per day, for up to 5 days, once the delay passes 12 hours.
U: it's been 8 hours. can I buy clothes and claim them?""",
"""U: Landed in Denver and my suitcase didn't. I've got Copperleaf travel insurance.
A: Sorry to hear that! With Copperleaf, baggage delay coverage pays for essentials up to $100 a day for up to 5 days once your bag is more than 12 hours late.
U: It's been 8 hours so far. Could I buy some clothes now and claim them?""",
early=[("Copperleaf travel insurance", "Copperleaf's cheapest travel plan, the Essentials one"),
       ("Sorry! Copperleaf's baggage delay benefit reimburses essential purchases up to $100 per day, for up to 5 days, once the delay passes 12 hours.",
        "Sorry! The Essentials plan doesn't include baggage delay coverage, though it does cover bags that are permanently lost.")],
late=[("8 hours", "14 hours")],
flip="""U: My flight to Denver is delayed. Does my Copperleaf policy cover trip delays?
A: Yes, trip delay pays up to $150 a day for meals and lodging once a delay exceeds 6 hours.""",
intent="it's been 8 hours. what if the airline never finds it?")

# ---------------------------------------------------------------- telecom
sc("telecom",
"""U: I'm on the Tellio Basic 10GB plan and going to Mexico next week.
A: Basic 10GB doesn't include international roaming, but you can add a TravelPass for $10 a day.
U: how much would that be for 6 days?""",
"""U: Heading to Mexico next week. I have Tellio's Basic 10GB plan.
A: Roaming isn't part of Basic 10GB, but a TravelPass can be added for $10 per day.
U: What would it cost for 6 days?""",
early=[("Basic 10GB", "Unlimited Plus"),
       ("doesn't include international roaming, but you can add a TravelPass for $10 a day",
        "includes roaming in Mexico and Canada at no extra cost; elsewhere a TravelPass is $10 a day")],
late=[("6 days", "2 weeks")],
flip="""U: Does Tellio have a hotspot day pass?
A: Yes, the Hotspot Day Pass gives you 5GB of tethering for $4 a day.""",
intent="how do I turn it on for those 6 days?")

sc("telecom",
"""U: I'm on Brisa Wireless with a phone on a 24-month installment plan. The phone was $900.
A: Brisa lets you upgrade once you've paid off 50% of the device price.
U: I've paid $300 so far. how much more before I can upgrade?""",
"""U: my phone on Brisa Wireless is on a 24-month installment plan, $900 device
A: On Brisa you're eligible to upgrade after paying off half of the device price.
U: So far I've paid $300. How much more until I can upgrade?""",
early=[("$900", "$1,300")],
late=[("$300", "$500")],
flip="""U: Brisa is running a trade-in promo on the new Zephyr X phone.
A: Yes. Trade in any phone and get $400 off, as long as your current device is at least 75% paid off.""",
intent="I've paid $300 so far. how much is left to pay it off entirely?")

sc("telecom",
"""U: I'm switching from Quanta Mobile to Tellio and want to keep my number.
A: No problem. You'll need your Quanta account number and a number transfer PIN.
U: where do I get the PIN?""",
"""U: moving over to Tellio from Quanta Mobile, I'd like to keep the same phone number
A: Sure thing. Have your Quanta account number and a transfer PIN ready.
U: How do I get that PIN?""",
early=[("from Quanta Mobile to Tellio", "from Tellio to Quanta Mobile"), ("your Quanta account number", "your Tellio account number")],
late=[("where do I get the PIN?", "where do I get the PIN? it's a prepaid line")],
flip="""U: I want to set up Tellio's parental controls on my son's phone.
A: You'll be asked for a 4-digit controls PIN when you turn them on.""",
intent="how long is the PIN valid for?")

sc("telecom",
"""U: I'm on Quanta's 5GB plan. What happens if I go over?
A: After 5GB your speed drops to 128 kbps until the next billing cycle; there's no extra charge.
U: can I buy a top-up instead of being slowed down?""",
"""U: What happens on Quanta's 5GB plan if I exceed the limit?
A: Once you pass 5GB you're slowed to 128 kbps until your cycle resets, with no overage fees.
U: Is there a data top-up I can buy so I don't get throttled?""",
early=[("5GB plan", "Unlimited Start plan"),
       ("After 5GB your speed drops to 128 kbps until the next billing cycle; there's no extra charge.",
        "Unlimited Start never cuts you off, but after 40GB your data may be deprioritized when the network is busy.")],
late=[("instead of being slowed down?", "instead of being slowed down? I'm roaming in France right now")],
flip="""U: My Quanta hotspot allowance is capped at 15GB a month.
A: Right. After 15GB of hotspot use, tethering is slowed to 600 kbps until your cycle resets.""",
intent="can I upgrade my plan instead of being slowed down?")

sc("telecom",
"""U: How much does Brisa charge for calls to India from my postpaid line?
A: Without an add-on it's $1.20 per minute. The World Calling add-on brings India down to 5 cents a minute for $5 a month.
U: I call my parents for about 2 hours a month. Which is cheaper?""",
"""U: What's Brisa's rate for calling India from a postpaid line?
A: It's $1.20 a minute on its own, or with the $5/month World Calling add-on India calls drop to 5 cents a minute.
U: I'm on the phone with my parents roughly 2 hours a month. What works out cheaper?""",
early=[("to India", "to Nigeria"), ("brings India down to 5 cents", "brings Nigeria down to 45 cents")],
late=[("about 2 hours a month", "a few minutes a month, maybe 3")],
flip="""U: I'm comparing Brisa's Talk 300 plan at $15 and Talk Unlimited at $25 for domestic calls.
A: Talk 300 includes 300 minutes, then 10 cents a minute; Talk Unlimited has no cap.""",
intent="I call my parents for about 2 hours a month. can I add the add-on mid-cycle?")

sc("telecom",
"""U: I signed a 24-month Tellio contract in March 2025. Can I cancel early?
A: Yes, but Tellio charges an early termination fee of $20 for each remaining month.
U: if I cancel in June 2026, what would I owe?""",
"""U: Is it possible to get out of my Tellio contract early? It's 24 months, started March 2025.
A: It is, though there's an early termination fee of $20 per remaining month.
U: What would I owe if I cancelled in June 2026?""",
early=[("March 2025", "March 2024")],
late=[("June 2026", "December 2026")],
flip="""U: I'm on a month-to-month Tellio plan, but I'm still paying off my phone at $35 a month.
A: You can cancel the plan anytime, but the remaining device balance becomes due immediately.""",
intent="if I cancel in June 2026, can I keep my number?")

sc("telecom",
"""U: We have Quanta Family with 3 lines at $120 a month.
A: Quanta Family is $40 per line for up to 4 lines, and $30 for each line beyond 4.
U: how much would it be if we add 2 more lines?""",
"""U: our Quanta Family plan has 3 lines, we pay $120/month
A: On Quanta Family each line is $40 up to 4 lines, and any line after the fourth is $30.
U: What would we pay with 2 more lines added?""",
early=[("3 lines at $120", "1 line at $40")],
late=[("2 more lines", "1 more line")],
flip="""U: Quanta also has tablet and smartwatch lines, right?
A: Yes, tablet lines are $20 a month and smartwatch lines are $10 a month.""",
intent="how much would it be if we drop 2 lines?")

sc("telecom",
"""U: I just got a Tellio eSIM for my new phone. The QR code isn't working.
A: Let's fix it. Is your phone unlocked and connected to Wi-Fi?
U: yes both. what do I try next?""",
"""U: the QR code for my Tellio eSIM won't scan on my new phone
A: Let's sort it out. Is the phone unlocked, and is it on Wi-Fi?
U: It's unlocked and on Wi-Fi. What should I try now?""",
early=[("my new phone", "my 2017 phone")],
late=[("yes both.", "it's unlocked but there's no Wi-Fi here.")],
flip="""U: My Tellio bill won't load in the app, it's just a spinning wheel.
A: Let's fix that. Is your Tellio app up to date, and are you on Wi-Fi?""",
intent="yes both. can I just switch back to a physical SIM instead?")

sc("telecom",
"""U: Why is my Brisa bill $92 this month? It's usually $65.
A: I see a one-time $27 charge for premium text messages to a short code.
U: I never signed up for that. can you remove it?""",
"""U: my Brisa bill is $92 this month, normally $65. what happened?
A: There's a one-time $27 charge for premium text messages sent to a short code.
U: I didn't sign up for anything like that. Could you take it off?""",
early=[("$92", "$70"), ("one-time $27 charge for premium text messages to a short code", "$5 prorated charge from your plan change on the 14th")],
late=[("I never signed up for that.", "My son says he subscribed to it by accident.")],
flip="""U: I got an email saying Brisa will add a $3 monthly regulatory fee starting next month.
A: Yes, that fee applies to all postpaid lines from the next billing cycle.""",
intent="I never signed up for that. how do I block those charges in future?")
