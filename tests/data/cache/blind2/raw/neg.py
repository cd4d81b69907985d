# Hand-written negation look-alikes (same_answer = false): polarity / modality flips.
CATEGORY = "negation"
DATA = r'''
@retail_banking
What happens if I pay my overdraft back before the end of the month? ~~ What happens if I don't pay my overdraft back before the end of the month?
Which Quillfield accounts pay interest? ~~ Which Quillfield accounts don't pay interest?
Why did my direct debit go out today? ~~ Why didn't my direct debit go out today?
What fees apply if I use an ATM that is in the Quillfield network? ~~ What fees apply if I use an ATM that isn't in the Quillfield network?
Which payments can I make in the Quillfield app? ~~ Which payments can't I make in the Quillfield app?
Can I open a current account if I have a credit history in this country? ~~ Can I open a current account if I don't have a credit history in this country?
Will I be charged if I stay within my arranged overdraft? ~~ Will I be charged if I don't stay within my arranged overdraft?
Do I have to visit a branch to close my account? ~~ Can I visit a branch to close my account?
Why was my transfer to a new payee flagged? ~~ Why wasn't my transfer to a new payee flagged?

@cards_payments
Why was my contactless payment accepted without a PIN? ~~ Why was my contactless payment not accepted without a PIN?
Which shops accept the Ambry card? ~~ Which shops don't accept the Ambry card?
What happens if I pay the minimum amount on my credit card? ~~ What happens if I don't pay the minimum amount on my credit card?
Which transactions earn Ambry reward points? ~~ Which transactions don't earn Ambry reward points?
Why is my card working in shops? It's blocked online. ~~ Why is my card not working in shops? It works online.
Must I set up autopay to keep the 0% offer? ~~ Can I set up autopay to keep the 0% offer?
What should I do if a purchase I made shows twice? ~~ What should I do if a purchase I didn't make shows on my card?
Which purchases need a PIN? ~~ Which purchases don't need a PIN?
Why did my card charge a foreign transaction fee on a purchase in pounds? ~~ Why didn't my card charge a foreign transaction fee on a purchase in pounds?

@insurance_claims
What happens if I report the accident to Mirevale within 24 hours? ~~ What happens if I don't report the accident to Mirevale within 24 hours?
Which items are covered under my contents policy? ~~ Which items aren't covered under my contents policy?
Which claims affect my no-claims discount? ~~ Which claims don't affect my no-claims discount?
Do I have to use an approved repairer after a claim? ~~ Can I use an approved repairer after a claim?
Is my premium affected if the accident was my fault? ~~ Is my premium affected if the accident wasn't my fault?
What happens to my no-claims bonus if I make a claim? ~~ What happens to my no-claims bonus if I don't make a claim this year?
Can I claim for water damage if the leak was sudden? ~~ Can I claim for water damage if the leak wasn't sudden?
Which drivers are allowed to drive my car under my policy? ~~ Which drivers aren't allowed to drive my car under my policy?

@telecom_mobile
What happens if I pay my Orvane bill on time? ~~ What happens if I don't pay my Orvane bill on time?
Which countries are included in Roam Free? ~~ Which countries are not included in Roam Free?
What should I do if my number has ported to Orvane? ~~ What should I do if my number hasn't ported to Orvane?
Do I need to unlock my phone to use an Orvane SIM? ~~ Can I unlock my phone to use an Orvane SIM?
Which Orvane plans let me use my phone as a hotspot? ~~ Which Orvane plans don't let me use my phone as a hotspot?
Which numbers are included in my free minutes? ~~ Which numbers aren't included in my free minutes?
What happens to my data if I use it all before the month ends? ~~ What happens to my data if I don't use it all before the month ends?
Can I make calls if I have mobile signal but no wifi? ~~ Can I make calls if I have wifi but no mobile signal?
Why is my phone connecting to 5G? ~~ Why is my phone not connecting to 5G?

@internet_service
Why is my smart TV connecting to the 5 GHz network? ~~ Why is my smart TV not connecting to the 5 GHz network?
What happens if I return the Zephra hub after cancelling? ~~ What happens if I don't return the Zephra hub after cancelling?
Which devices support the 6 GHz wifi band? ~~ Which devices don't support the 6 GHz wifi band?
Can I get Zephra if my building has fibre? ~~ Can I get Zephra if my building doesn't have fibre?
Do I have to be home for the installation? ~~ Can I be home for the installation?
Which Zephra plans have a minimum term? ~~ Which Zephra plans don't have a minimum term?
Which ports are open on the Zephra hub by default? ~~ Which ports are not open on the Zephra hub by default?
What's included in the price if I take line rental? ~~ What's included in the price if I don't take line rental?

@utilities
What happens if I submit a meter reading this month? ~~ What happens if I don't submit a meter reading this month?
Why was my direct debit taken early? ~~ Why wasn't my direct debit taken?
Which appliances use electricity when they're switched off at the wall? ~~ Which appliances use electricity when they're not switched off at the wall?
Do I have to accept a smart meter? ~~ Can I accept a smart meter?
Which tariffs work with a smart meter? ~~ Which tariffs don't work with a smart meter?
Can I switch supplier if I owe money? ~~ Can I switch supplier if I don't owe money?
What should I do if the boiler pressure is dropping? ~~ What should I do if the boiler pressure is not dropping but the heating still won't come on?
Which water charges can I avoid? ~~ Which water charges can't I avoid?

@tax
What happens if I pay my tax bill by the 31st of January? ~~ What happens if I don't pay my tax bill by the 31st of January?
Which expenses can I claim as a sole trader? ~~ Which expenses can't I claim as a sole trader?
Do I have to file a tax return if I'm self-employed? ~~ Do I have to file a tax return if I'm not self-employed?
Why was tax deducted from my savings interest? ~~ Why wasn't tax deducted from my savings interest?
Is my pension income taxable? ~~ Which parts of my pension income are not taxable?
Which benefits are taxable? ~~ Which benefits are not taxable?
Must I register for VAT if my turnover is under the threshold? ~~ Can I register for VAT if my turnover is under the threshold?
Why did I receive a tax refund this year? ~~ Why didn't I receive a tax refund this year?

@travel_bookings
What happens if I check in online before my flight? ~~ What happens if I don't check in online before my flight?
Which Voyaro bookings are refundable? ~~ Which Voyaro bookings are non-refundable?
Which Voyaro bookings need a credit card? ~~ Which Voyaro bookings don't need a credit card?
Do I have to pay the deposit at booking? ~~ Can I pay the deposit at booking?
Which hotels allow pets? ~~ Which hotels don't allow pets?
What do I need to travel to Morocco if I have an EU passport? ~~ What do I need to travel to Morocco if I don't have an EU passport?
Why did the hotel charge my card? ~~ Why didn't the hotel charge my card?
What if I show up at the hotel on the booked date? I mean will they give me the room? ~~ What if I don't show up at the hotel on the booked date?

@airline_baggage
Which items can I pack in my hand luggage? ~~ Which items can't I pack in my hand luggage?
What happens if my bag meets the cabin size limit? ~~ What happens if my bag doesn't meet the cabin size limit?
Why did my bag go through to my final destination? ~~ Why didn't my bag go through to my final destination?
Do I have to check in my pushchair? ~~ Can I check in my pushchair?
Which fares include a checked bag? ~~ Which fares don't include a checked bag?
Is my suitcase allowed if it has a lithium battery that is removable? ~~ Is my suitcase allowed if it has a lithium battery that isn't removable?
Can I take my medicine on board if it's in its original packaging? ~~ Can I take my medicine on board if it's not in its original packaging?
What should I do if my bag was tagged correctly? ~~ What should I do if my bag wasn't tagged correctly?

@ecommerce_orders
What happens if I'm home when the Cartwell courier arrives? ~~ What happens if I'm not home when the Cartwell courier arrives?
Which items can be returned? ~~ Which items can't be returned?
Why was my order shipped? I cancelled it. ~~ Why wasn't my order shipped?
Do I have to return the item before I get a replacement? ~~ Can I return the item before I get a replacement?
Does my discount code work if items are on sale? ~~ Does my discount code work if items aren't on sale?
Can I return an item if the tags are still attached? ~~ Can I return an item if the tags aren't still attached?
What should I do if my parcel has been signed for by someone I know? ~~ What should I do if my parcel has been signed for by someone I don't know?
Which products ship internationally? ~~ Which products don't ship internationally?

@subscriptions_streaming
What happens if I cancel my Fennix subscription? ~~ What happens if I don't cancel my Fennix subscription before the trial ends?
Which Fennix titles can be downloaded? ~~ Which Fennix titles can't be downloaded?
Why is my payment going through? I thought I'd cancelled ~~ Why is my payment not going through?
Do I have to sign in on every device? ~~ Can I sign in on every device?
Why did my Tandlo playlist sync to my phone? ~~ Why didn't my Tandlo playlist sync to my phone?
Which devices support Fennix in 4K? ~~ Which devices don't support Fennix in 4K?
Can I keep my profiles if I rejoin later? ~~ Can I keep my profiles if I don't rejoin within ten months?
Why are subtitles showing? ~~ Why are subtitles not showing?

@hr_payroll
What happens if I take all my annual leave before December? ~~ What happens if I don't take all my annual leave before December?
Which allowances are included in my pensionable pay? ~~ Which allowances aren't included in my pensionable pay?
Which hours count as overtime? ~~ Which hours don't count as overtime?
Do I have to join the company pension? ~~ Can I join the company pension?
Am I entitled to sick pay if I've passed my probation? ~~ Am I entitled to sick pay if I haven't passed my probation?
Why did tax come off my bonus? ~~ Why didn't tax come off my bonus?
Which public holidays are paid? ~~ Which public holidays aren't paid?
Must I give a reason when I request unpaid leave? ~~ Can I give a reason when I request unpaid leave?

@it_helpdesk
Why does my laptop automatically connect to the guest wifi? ~~ Why doesn't my laptop automatically connect to the guest wifi?
Which apps are allowed on my work phone? ~~ Which apps aren't allowed on my work phone?
What happens if I restart my laptop during an update? ~~ What happens if I don't restart my laptop after an update?
Do I have to use MFA on the VPN? ~~ Can I use MFA on the VPN?
Why are my work emails syncing to my phone? ~~ Why are my work emails not syncing to my phone?
Why is my second monitor detected? ~~ Why is my second monitor not detected?
Which file types can I upload to the shared drive? ~~ Which file types can't I upload to the shared drive?
Can I access email from a device that's enrolled in company management? ~~ Can I access email from a device that isn't enrolled in company management?

@rental_housing
What happens if I pay the rent on time every month? ~~ What happens if I don't pay the rent on time every month?
Which repairs is the landlord responsible for? ~~ Which repairs isn't the landlord responsible for?
What can I do if my deposit was protected in a scheme? ~~ What can I do if my deposit wasn't protected in a scheme?
Do I have to let the landlord in for an inspection? ~~ Can I let the landlord in for an inspection when I'm out?
Can I be evicted if I have a written tenancy agreement? ~~ Can I be evicted if I don't have a written tenancy agreement?
Can the landlord keep my deposit if I leave the flat clean? ~~ Can the landlord keep my deposit if I don't leave the flat clean?
Which bills are included in my rent? ~~ Which bills aren't included in my rent?
Is the landlord allowed to enter if I give permission? ~~ Is the landlord allowed to enter if I don't give permission?

@healthcare_admin
What happens if I attend my appointment late? ~~ What happens if I don't attend my appointment?
Which treatments does my Halcyon plan cover? ~~ Which treatments doesn't my Halcyon plan cover?
What do I do if my prescription has been sent to the pharmacy? ~~ What do I do if my prescription hasn't been sent to the pharmacy?
Do I have to see a GP before booking physio? ~~ Can I see a GP before booking physio?
Why did my claim get approved so fast? ~~ Why didn't my claim get approved?
Can I register with a surgery if I have a permanent address? ~~ Can I register with a surgery if I don't have a permanent address?
Which vaccines are free for adults? ~~ Which vaccines aren't free for adults?
Which blood tests require fasting? ~~ Which blood tests don't require fasting?

@education_admin
What happens if I submit my assignment on time? ~~ What happens if I don't submit my assignment on time?
Which modules count towards my final degree classification? ~~ Which modules don't count towards my final degree classification?
Can I get a student loan if I've studied at university before? ~~ Can I get a student loan if I haven't studied at university before?
Do I have to attend the graduation ceremony to get my degree? ~~ Can I attend the graduation ceremony to get my degree?
Can I resit an exam if I passed it? ~~ Can I resit an exam if I didn't pass it?
Which assessments are anonymously marked? ~~ Which assessments aren't anonymously marked?
Which courses require an interview? ~~ Which courses don't require an interview?
Which exams do I need to register for? ~~ Which exams don't I need to register for?

@cooking
Why did my bread rise so much? ~~ Why didn't my bread rise?
Which cheeses melt well? ~~ Which cheeses don't melt well?
What happens if I rest the dough overnight? ~~ What happens if I don't rest the dough?
Can I freeze cooked rice if it was cooled quickly? ~~ Can I freeze cooked rice if it wasn't cooled quickly?
Which vegetables should I peel before roasting? ~~ Which vegetables shouldn't I peel before roasting?
Which herbs should be added at the end of cooking? ~~ Which herbs shouldn't be added at the end of cooking?
Do I have to soak chickpeas before cooking? ~~ Can I soak chickpeas before cooking?
Which fruits ripen after picking? ~~ Which fruits don't ripen after picking?

@general_knowledge
Which animals can see colour? ~~ Which animals can't see colour?
Why do some birds migrate? ~~ Why don't some birds migrate?
Which countries use the euro? ~~ Which EU countries don't use the euro?
Which planets have rings? ~~ Which planets don't have rings?
Which mammals lay eggs? ~~ Which mammals don't lay eggs?
Which planets have moons? ~~ Which planets don't have moons?
What happens if you eat before swimming? ~~ What happens if you don't eat before swimming?
Which US states observe daylight saving time? ~~ Which US states don't observe daylight saving time?

@programming
Why does my Python script find the module when I run it from the project root? ~~ Why doesn't my Python script find the module when I run it from the project root?
What happens if I close a file in Python? ~~ What happens if I don't close a file in Python?
Which JavaScript array methods mutate the array? ~~ Which JavaScript array methods don't mutate the array?
Why does my CSS apply to the child elements? ~~ Why doesn't my CSS apply to the child elements?
Why does git push ask for my password? ~~ Why doesn't git push ask for my password?
When should I use an index on a column? ~~ When shouldn't I use an index on a column?
Which Python types are hashable? ~~ Which Python types are not hashable?
What happens if I await a promise in a loop? ~~ What happens if I don't await a promise in a loop?
Should I commit my .env file to git? ~~ Why shouldn't I commit my .env file to git?

@personal_finance
What happens if I pay off my credit card in full each month? ~~ What happens if I don't pay off my credit card in full each month?
Which debts should I pay first? ~~ Which debts shouldn't I pay first?
Why did my credit score go up? ~~ Why didn't my credit score go up?
Do I have to pay into a pension? ~~ Can I pay into a pension?
Should I invest if I have credit card debt? ~~ Should I invest if I don't have credit card debt?
Which savings accounts are tax-free? ~~ Which savings accounts aren't tax-free?
Can I get a mortgage if I'm self-employed with accounts? ~~ Can I get a mortgage if I'm self-employed without accounts?
Which investments beat inflation? ~~ Which investments don't beat inflation?
'''
