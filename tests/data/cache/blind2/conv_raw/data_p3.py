# Hand-written scenarios, part 3: e-commerce, subscriptions, HR/payroll, IT help.
from convlib import sc

# ---------------------------------------------------------------- ecommerce
sc("ecommerce",
"""U: I bought a jacket from Nordtrail on October 2nd.
A: Nordtrail accepts returns of unworn items within 30 days of delivery. Your order was delivered on October 5th.
U: it's November 1st. can I still return it?""",
"""U: I ordered a jacket from Nordtrail on October 2nd.
A: Unworn items can be returned to Nordtrail within 30 days of delivery; your order arrived October 5th.
U: Today's November 1st. Am I still able to return it?""",
early=[("a jacket", "a swimsuit"),
       ("Nordtrail accepts returns of unworn items within 30 days of delivery.",
        "Nordtrail accepts returns of unworn items within 30 days of delivery, except swimwear, which is final sale.")],
late=[("November 1st", "November 10th")],
flip="""U: I rented a tent from Nordtrail's gear rental program on October 28th.
A: Rentals are due back within 3 days; late returns are charged $15 per day.""",
intent="it's November 1st. can I exchange it for a bigger size instead?")

sc("ecommerce",
"""U: I just placed a Parcelio order (#P-55821) but I used my old address.
A: I see the order. It hasn't shipped yet, so the address can still be updated.
U: great, can you change it to 14 Birch Lane, Apt 3?""",
"""U: Parcelio order #P-55821 just went through but it's going to my old address
A: Found it. It hasn't shipped, so we can still change the delivery address.
U: Perfect, please update it to 14 Birch Lane, Apt 3.""",
early=[("I just placed a Parcelio order (#P-55821)", "I placed a Parcelio order (#P-55821) last Tuesday"),
       ("It hasn't shipped yet, so the address can still be updated.", "It shipped yesterday, so the address can no longer be changed on our end.")],
late=[("14 Birch Lane, Apt 3", "PO Box 118")],
flip="""U: I need to update the billing address on my Parcelio account.
A: Sure, I can update the billing address for your saved card.""",
intent="great, can you also upgrade it to express shipping?")

sc("ecommerce",
"""U: My Shopvane order arrived and the blender jar is cracked.
A: I'm sorry! Please send a photo of the damage. Do you want a replacement or a refund?
U: replacement please. how long will it take?""",
"""U: Shopvane delivered my order today and the jar on the blender is cracked.
A: So sorry about that! Could you send us a photo? Would you like a refund or a replacement?
U: I'd like a replacement. How long until I get it?""",
early=[("My Shopvane order", "My Shopvane Marketplace order from a third-party seller")],
late=[("replacement please.", "replacement please, but ship it to my cabin in Alaska.")],
flip="""U: The Shopvane blender I bought 3 months ago stopped working.
A: It's still under the 1-year manufacturer warranty. Would you like a replacement or a repair under the warranty?""",
intent="refund please. how long will it take?")

sc("ecommerce",
"""U: I bought a TV from Shopvane for $649 last week. It's now $579.
A: Shopvane offers a price adjustment if the price drops within 14 days of purchase.
U: so how much would I get back?""",
"""U: Last week I paid $649 for a TV on Shopvane and the price has dropped to $579.
A: If the price drops within 14 days of purchase, Shopvane will adjust it for you.
U: What would the refund be?""",
early=[("last week", "last month")],
late=[("so how much would I get back?", "it dropped again to $549 today. so how much would I get back?")],
flip="""U: I want to return the $649 TV I bought from Shopvane. It has a dead pixel.
A: Defective items get a full refund, and we'll cover the return shipping.""",
intent="so how do I request the adjustment?")

sc("ecommerce",
"""U: Does Parcelio have free shipping? I'm not a Parcelio Plus member.
A: Parcelio Plus members get free shipping on every order; otherwise standard shipping is free from $35, and $5.99 below that.
U: my cart is $29.50. what's the total with shipping?""",
"""U: I don't have Parcelio Plus. Is there free shipping?
A: Plus members always ship free. Without Plus, standard shipping is free on orders of $35 and up and costs $5.99 otherwise.
U: With $29.50 in my cart, what's my total including shipping?""",
early=[("I'm not a Parcelio Plus member.", "I'm a Parcelio Plus member.")],
late=[("$29.50", "$41.00")],
flip="""U: Parcelio delivers to Canada too, right?
A: Yes. Shipping to Canada is a flat $12.99 regardless of order size.""",
intent="my cart is $29.50. what's the cheapest thing I can add to get free shipping?")

sc("ecommerce",
"""U: I bought a Kettleworks espresso machine from Nordtrail in 2024.
A: Kettleworks machines come with a 2-year manufacturer warranty from the purchase date.
U: it's leaking now. is it still covered?""",
"""U: I got my Kettleworks espresso machine from Nordtrail back in 2024.
A: Kettleworks provides a 2-year manufacturer's warranty starting on the date of purchase.
U: Now it leaks. Would the warranty cover that?""",
early=[("in 2024", "in 2021")],
late=[("it's leaking now.", "it's leaking now because I dropped it.")],
flip="""U: Nordtrail sold me a tent with a lifetime warranty.
A: Nordtrail's lifetime warranty covers manufacturing defects for the life of the product.""",
intent="it's leaking now. can I repair it myself without voiding the warranty?")

sc("ecommerce",
"""U: I have a Shopvane gift card with $75 on it. Can I use it for a Shopvane Marketplace item?
A: Yes, Shopvane gift cards work on Marketplace items sold by third-party sellers too.
U: the item is $112. how much do I still need to pay?""",
"""U: Can I use my $75 Shopvane gift card on something from Shopvane Marketplace?
A: You can. Shopvane gift cards are accepted on third-party Marketplace items as well.
U: If the item costs $112, how much is left for me to pay?""",
early=[("$75", "$150")],
late=[("$112", "$60")],
flip="""U: Shopvane has a 25% off coupon for first-time app users, right?
A: Yes, 25% off one order, up to $50 off.""",
intent="the item is $112. can I split the rest between two cards?")

sc("ecommerce",
"""U: I ordered a sofa from Nordtrail Home yesterday and changed my mind.
A: Furniture orders can be cancelled free within 48 hours. After that, a 15% restocking fee applies.
U: can I cancel it?""",
"""U: Changed my mind about a sofa I ordered from Nordtrail Home yesterday.
A: Furniture orders can be cancelled at no cost within 48 hours of ordering; after that there's a 15% restocking fee.
U: Can I cancel the order?""",
early=[("yesterday", "last week")],
late=[("can I cancel it?", "can I cancel it? it's already been delivered")],
flip="""U: I signed up for Nordtrail's Gear Club annual membership yesterday.
A: Gear Club costs $49 a year and includes free shipping and member pricing.""",
intent="can I change the color instead?")

sc("ecommerce",
"""U: Parcelio says my package was delivered on Friday but I don't have it.
A: Sorry about that. Sometimes carriers mark packages delivered early. Have you checked with neighbors and around the property?
U: yes, nothing. what now?""",
"""U: My Parcelio package shows as delivered Friday, but it isn't here.
A: I'm sorry. Carriers occasionally scan packages as delivered too early. Did you check with neighbors and around your home?
U: I did, no luck. What's next?""",
early=[("was delivered on Friday", "was delivered 45 minutes ago")],
late=[("yes, nothing.", "not yet, I'm away until Sunday.")],
flip="""U: My Parcelio refund was supposed to be on my card by Friday but it isn't there.
A: Refunds are issued on our side within 2 days; banks can take up to 5 business days to post them. Have you checked your pending transactions?""",
intent="yes, nothing. can I get a refund instead of a replacement?")

# ---------------------------------------------------------------- subscriptions
sc("subscriptions",
"""U: I'm on Streamory Premium at $22.99 a month, billed on the 12th.
A: Thanks. Premium includes 4K and 4 simultaneous streams.
U: if I switch to Standard today, when does the new price start?""",
"""U: I pay $22.99/month for Streamory Premium; billing is on the 12th.
A: Got it. Premium gives you 4K and up to 4 streams at once.
U: When would the new price kick in if I moved to Standard today?""",
early=[("at $22.99 a month, billed on the 12th", "on the annual plan, renewing in August")],
late=[("to Standard", "to Premium Plus")],
flip="""U: Streamory announced the Standard plan is going up to $15.99.
A: Yes, existing Standard subscribers will see the new price from their first billing date after March 1.""",
intent="if I switch to Standard today, do I lose 4K right away?")

sc("subscriptions",
"""U: I signed up for a Fitlane free trial on the 3rd.
A: Fitlane trials last 7 days, and you'll be charged $59.99 for the annual plan when it ends unless you cancel.
U: if I cancel on the 9th, will I be charged?""",
"""U: I started a Fitlane free trial on the 3rd.
A: The trial runs 7 days; after that the $59.99 annual plan is charged unless you've cancelled.
U: Would I get charged if I cancel on the 9th?""",
early=[("on the 3rd", "on the 1st")],
late=[("on the 9th", "on the 11th")],
flip="""U: I have a Fitlane annual plan that renewed on the 8th.
A: You can cancel anytime; cancellations within 14 days of renewal get a prorated refund of the annual charge.""",
intent="if I cancel on the 9th, do I lose access immediately?")

sc("subscriptions",
"""U: Can I share my Readwell subscription with my family? I'm on Readwell Solo.
A: Readwell Solo is for one account only. Readwell Family allows up to 5 members in the same household.
U: how much more is Family per month?""",
"""U: I have Readwell Solo. Is it possible to share it with my family?
A: Solo covers just one account; if you want to share, Readwell Family supports up to 5 people in one household.
U: What's the monthly price difference for Family?""",
early=[("I'm on Readwell Solo.", "I'm on Readwell Student."), ("Readwell Solo is for one account only.", "Readwell Student is for one verified student only.")],
late=[("per month?", "per year?")],
flip="""U: We're comparing Readwell Family with Cloudnest Family for our shared photos and books.
A: Cloudnest Family includes 2TB of storage shared among up to 6 people.""",
intent="how do I invite my family once I switch?")

sc("subscriptions",
"""U: Cloudnest just renewed my annual 2TB plan for $99 yesterday. I didn't want it.
A: I see the renewal. Cloudnest offers full refunds on annual renewals requested within 14 days.
U: can you refund it?""",
"""U: My Cloudnest annual 2TB plan auto-renewed yesterday for $99 and I didn't want that.
A: I can see that renewal. Annual renewals get a full refund if you ask within 14 days.
U: Could you refund it, please?""",
early=[("yesterday", "three weeks ago")],
late=[("can you refund it?", "can you refund it to a different card? the old one is closed.")],
flip="""U: I bought a $99 Cloudnest gift subscription for my dad yesterday, but he already has one.
A: Gift subscriptions can be refunded as long as the gift code hasn't been redeemed.""",
intent="can you switch it to monthly instead?")

sc("subscriptions",
"""U: Streamory emailed that my Basic plan goes from $8.99 to $10.99 next month.
A: That's right, the new Basic price applies from your first billing date after May 1.
U: I'm billed on April 28. which price will I pay then?""",
"""U: Got an email from Streamory. Basic is going from $8.99 to $10.99 next month.
A: Yes, the new Basic price starts on your first billing date after May 1.
U: My billing date is April 28. What will I be charged then?""",
early=[("my Basic plan goes", "my Basic plan (I prepaid a full year in January) goes")],
late=[("April 28", "May 3")],
flip="""U: I'm switching to Streamory Premium at $22.99, and I have a 20% loyalty discount for the first 3 months.
A: Right, the discount applies to your first three Premium bills.""",
intent="I'm billed on April 28. can I lock in the old price with an annual plan?")

sc("subscriptions",
"""U: I get the HomeFork meal kit, 3 meals for 2 people each week.
A: Great choice. Your plan is $65.94 a week, delivered on Thursdays.
U: if I skip next week and the week after, how much do I save?""",
"""U: I'm subscribed to HomeFork meal kits: 3 meals a week, 2 servings each.
A: Thanks! That plan costs $65.94 per week with Thursday deliveries.
U: How much would I save skipping the next two weeks?""",
early=[("3 meals for 2 people", "4 meals for 4 people"), ("$65.94", "$143.84")],
late=[("next week and the week after", "just next week")],
flip="""U: HomeFork charges a $9.99 delivery fee on small boxes, right?
A: Yes, boxes under $50 have a $9.99 delivery fee; $50 and up ship free.""",
intent="if I skip next week and the week after, when is my next charge?")

sc("subscriptions",
"""U: I want to cancel Readwell. I'm on the monthly plan, renewed on the 5th.
A: You can cancel anytime in Settings > Subscription, and you'll keep access through the current period.
U: will I get any money back?""",
"""U: Cancelling Readwell. I'm on monthly and it renewed on the 5th.
A: Cancel whenever you like under Settings > Subscription; access continues until the end of the current period.
U: Do I get any of my money back?""",
early=[("monthly plan", "annual plan")],
late=[("will I get any money back?", "will I get any money back? I was charged twice this month")],
flip="""U: Readwell charged me for an audiobook I bought by accident 10 minutes ago.
A: I can see the $14.99 audiobook purchase from today.""",
intent="will I lose my saved highlights?")

sc("subscriptions",
"""U: Does Streamory have a student discount?
A: Yes, Streamory Student is 50% off Premium for verified university students.
U: I'm a high school senior. can I get it?""",
"""U: Is there a student discount on Streamory?
A: There is. Streamory Student gives verified university students 50% off Premium.
U: I'm a senior in high school. Am I eligible?""",
late=[("I'm a high school senior.", "I'm a part-time grad student.")],
flip="""U: Does Streamory have a free trial for new members?
A: New members get a 7-day free trial of any plan.""",
intent="I'm a high school senior. can my parents add me to their plan instead?")

sc("subscriptions",
"""U: Cloudnest says my payment failed. I'm on the 200GB plan.
A: We tried to charge your Visa ending 2291 on the 18th and it was declined. You have a 7-day grace period before the account is downgraded.
U: what happens to my files after that?""",
"""U: I got a payment failed message from Cloudnest; my plan is 200GB.
A: The charge to your Visa ending 2291 was declined on the 18th. There's a 7-day grace period, then the account drops to the free tier.
U: And then what happens to my files?""",
early=[("I'm on the 200GB plan.", "I'm on the 200GB plan, but I only use 3GB of it.")],
late=[("what happens to my files after that?", "what happens to my files after that if I update the card on day 10?")],
flip="""U: I'm deleting my Cloudnest account entirely.
A: Account deletion becomes permanent after a 30-day recovery window.""",
intent="how do I update my card before that?")

# ---------------------------------------------------------------- hr_payroll
sc("hr_payroll",
"""U: I'm a full-time employee at Orrin Logistics, started in January.
A: Full-time employees accrue 1.25 PTO days per month in their first 3 years.
U: how many days will I have by the end of June?""",
"""U: Started at Orrin Logistics in January as a full-time employee.
A: In your first 3 years as a full-time employee you accrue 1.25 PTO days every month.
U: By the end of June, how many PTO days will I have?""",
early=[("full-time employee", "part-time employee"), ("Full-time employees accrue 1.25 PTO days", "Part-time employees accrue 0.6 PTO days")],
late=[("end of June", "end of September")],
flip="""U: I get 10 sick days a year at Orrin and I've used 4 so far.
A: Sick days reset every January 1, and unused ones don't roll over.""",
intent="how many days can I carry over into next year?")

sc("hr_payroll",
"""U: I'm an hourly warehouse associate at Orrin, $22 an hour.
A: Hourly associates get 1.5x pay for hours over 40 in a week.
U: I worked 46 hours last week. what's my gross pay?""",
"""U: I work hourly in the Orrin warehouse at $22/hour.
A: For hourly associates, anything past 40 hours a week is paid at 1.5 times the regular rate.
U: Last week I put in 46 hours. What's the gross?""",
early=[("$22", "$25")],
late=[("46 hours", "38 hours")],
flip="""U: I'm a salaried shift supervisor at Orrin, $1,100 a week.
A: Salaried supervisors are exempt from overtime, so your weekly pay doesn't change with hours.""",
intent="I worked 46 hours last week. how much of that is overtime pay?")

sc("hr_payroll",
"""U: I'm expecting a baby in March. I've been at Orrin for 8 months.
A: Congratulations! Orrin offers 12 weeks of paid parental leave to employees with at least 12 months of service.
U: would I qualify?""",
"""U: Baby due in March! I've worked at Orrin for 8 months so far.
A: Congrats! Paid parental leave at Orrin is 12 weeks for employees with 12+ months of service.
U: Am I eligible?""",
early=[("8 months", "2 years")],
late=[("would I qualify?", "would I qualify if I start the leave in June instead?")],
flip="""U: Orrin is offering a tuition reimbursement program for certifications.
A: It covers up to $5,250 a year for employees with at least 6 months of service.""",
intent="would my partner also qualify?")

sc("hr_payroll",
"""U: I left Orrin in August. How do I get my W-2 for this year?
A: W-2s are posted in Payvanta by January 31.
U: I don't remember my Payvanta password. what do I do?""",
"""U: How can I get this year's W-2? I left Orrin in August.
A: Your W-2 will be posted to Payvanta by January 31.
U: I've forgotten my Payvanta password. What should I do?""",
early=[("I left Orrin in August.", "I still work at Orrin.")],
late=[("I don't remember my Payvanta password.", "I don't remember my Payvanta password and I no longer have the phone number on file.")],
flip="""U: I'm a manager approving timesheets in Payvanta for my team.
A: Managers sign in to Payvanta with Orrin single sign-on.""",
intent="how do I change my mailing address so the paper W-2 reaches me?")

sc("hr_payroll",
"""U: Orrin matches 401(k) contributions. I make $60,000.
A: Orrin matches 100% of the first 3% and 50% of the next 2% of your salary.
U: if I contribute 5%, how much does Orrin put in per year?""",
"""U: My salary is $60,000 and I know Orrin has a 401(k) match.
A: The match is dollar-for-dollar on the first 3% of pay, then 50 cents per dollar on the next 2%.
U: How much would Orrin contribute in a year if I put in 5%?""",
early=[("$60,000", "$85,000")],
late=[("5%", "2%")],
flip="""U: Orrin also has an employee stock purchase plan.
A: The ESPP lets you buy Orrin shares at a 15% discount, with contributions of up to 10% of salary.""",
intent="if I contribute 5%, how much will my paycheck go down?")

sc("hr_payroll",
"""U: I took a client to dinner for Orrin and paid $140 on my own card.
A: Client meals are reimbursable up to $75 per person with an itemized receipt, submitted in Payvanta within 30 days.
U: there were 2 of us. will I get the full amount back?""",
"""U: Paid $140 on my personal card to take a client out to dinner for Orrin.
A: Orrin reimburses client meals up to $75 per person, with an itemized receipt submitted through Payvanta within 30 days.
U: It was the two of us. Will the whole thing be reimbursed?""",
early=[("$140", "$190")],
late=[("there were 2 of us.", "it was just me, the client cancelled last minute.")],
flip="""U: My coworker and I drove separately to a training course, and I paid $140 for both cars' parking.
A: Parking is reimbursed at actual cost, but only for your own vehicle.""",
intent="there were 2 of us. how long until the reimbursement arrives?")

sc("hr_payroll",
"""U: Orrin pays on the 15th and the last day of the month.
A: Right. If a payday falls on a weekend or holiday, you're paid the business day before.
U: the 15th is a Saturday this month. when will I get paid?""",
"""U: Paydays at Orrin are the 15th and the last day of each month.
A: Yes, and when a payday lands on a weekend or holiday, pay goes out the business day before.
U: This month the 15th is a Saturday. When do I get paid?""",
late=[("Saturday", "Wednesday")],
flip="""U: Our Orrin bonus is paid on the 15th, but if that's a weekend it goes out the following Monday.
A: Correct, bonuses follow the next-business-day rule.""",
intent="the 15th is a Saturday this month. when does my timesheet need to be submitted?")

sc("hr_payroll",
"""U: I got married on October 20th. Can I add my wife to my Orrin health insurance?
A: Yes, marriage is a qualifying life event. You have 30 days from the date of the event to make changes in Payvanta.
U: today's November 25th. am I too late?""",
"""U: We got married October 20th. Can I put my wife on my Orrin health plan?
A: You can; marriage counts as a qualifying life event, and you have 30 days from the event to update coverage in Payvanta.
U: It's November 25th today. Have I missed the window?""",
early=[("October 20th", "November 1st")],
late=[("November 25th", "November 10th")],
flip="""U: Orrin's holiday gift card order form is due by November 30th.
A: Yes, submit it in Payvanta under Forms by the 30th.""",
intent="today's November 25th. when would her coverage start?")

sc("hr_payroll",
"""U: I'm resigning from Orrin; I earn $240 a day. My last day is Friday the 14th.
A: Thanks for letting us know. Your final pay will include any unused PTO, paid out at your regular rate.
U: I have 6 days of PTO left. how much will that be?""",
"""U: My last day at Orrin will be Friday the 14th. I'm resigning. I make $240 a day.
A: Thanks for the heads-up. Unused PTO gets paid out in your final paycheck at your regular rate.
U: There are 6 PTO days left. What will that come to?""",
early=[("$240", "$310")],
late=[("6 days", "2 days")],
flip="""U: I'm taking a month of unpaid leave, and Orrin lets me use PTO to cover part of it.
A: Yes, each PTO day you use is paid at your regular daily rate of $200.""",
intent="I have 6 days of PTO left. can I use them before my last day instead?")

# ---------------------------------------------------------------- it_help
sc("it_help",
"""U: Gatekeep VPN keeps disconnecting every few minutes on my Windows laptop at home.
A: Let's check a few things. Are you on Wi-Fi or wired? And which Gatekeep version are you on?
U: Wi-Fi, version 4.2. what should I do?""",
"""U: my Gatekeep VPN drops every few minutes, Windows laptop, working from home
A: A few questions first: Wi-Fi or Ethernet, and what Gatekeep version do you have?
U: I'm on Wi-Fi with Gatekeep 4.2. What do I do?""",
early=[("Windows laptop", "MacBook")],
late=[("4.2", "4.6")],
flip="""U: Teams calls keep cutting out on my Windows laptop at home.
A: Let's narrow it down. Are you on Wi-Fi or wired, and which version of the Teams client are you on?""",
intent="Wi-Fi, version 4.2. how do I collect logs for the helpdesk?")

sc("it_help",
"""U: My work laptop is 5 years old and really slow. Can I get a new one?
A: Laptops are eligible for refresh after 4 years. You can request one in the IT portal under Hardware > Refresh.
U: how long does it usually take to arrive?""",
"""U: Could I get a replacement for my work laptop? It's 5 years old and super slow.
A: After 4 years a laptop qualifies for refresh. Submit a request in the IT portal under Hardware > Refresh.
U: What's the typical delivery time?""",
early=[("5 years old", "2 years old")],
late=[("how long does it usually take to arrive?", "how long does it usually take to arrive if I'm fully remote in another state?")],
flip="""U: I ordered a docking station through the IT portal yesterday.
A: I see the request. It's approved and with the supplier.""",
intent="what happens to the files on my old one?")

sc("it_help",
"""U: I need access to the billing@ shared mailbox in Outlook.
A: Access to shared mailboxes needs approval from the mailbox owner. For billing@, that's the Finance Ops manager.
U: she approved it this morning. how long until it shows up?""",
"""U: Can I get access to the billing@ shared mailbox in Outlook?
A: Shared mailbox access requires the owner's approval. For billing@ that's the Finance Ops manager.
U: She approved it this morning; when will it appear?""",
early=[("in Outlook", "in Outlook on my phone")],
late=[("this morning", "3 days ago")],
flip="""U: I asked IT for a new distribution list, team-design@.
A: New distribution lists need approval from your department head before IT creates them.""",
intent="she approved it this morning. can I send emails as billing@ too?")

sc("it_help",
"""U: Can I install Zoomly on my work laptop? It's a Mac.
A: Zoomly is approved software. On Macs, install it from Self Service.
U: do I need admin rights for that?""",
"""U: I'd like to put Zoomly on my work MacBook. is that allowed?
A: Yes, Zoomly is on the approved list. On a Mac you can get it from Self Service.
U: Will I need admin rights to install it?""",
early=[("Can I install Zoomly on my work laptop?", "Can I install Tunebox on my work laptop?"),
       ("Zoomly is approved software. On Macs, install it from Self Service.",
        "Tunebox isn't on the approved software list, so it needs a software exception request first.")],
late=[("do I need admin rights for that?", "do I need admin rights for that if I'm a contractor?")],
flip="""U: I want to change the system time zone on my work Mac.
A: Time zone can be changed in System Settings > General > Date & Time.""",
intent="do I need to uninstall the old version first?")

sc("it_help",
"""U: I got an email from "IT Support" asking me to confirm my password via a link.
A: That's very likely phishing. IT never asks for your password by email. Don't click the link.
U: I already clicked it and typed my password. what now?""",
"""U: There's an email from "IT Support" with a link asking me to verify my password.
A: That looks like phishing. IT will never ask for your password over email. Please don't click it.
U: Too late, I clicked and entered my password. What should I do?""",
late=[("I already clicked it and typed my password.", "I already clicked it but didn't type anything.")],
flip="""U: I got a text that looked like it came from Brightwell Bank saying my card is blocked, with a link.
A: That could be smishing. Brightwell won't ask you to log in via text message links.""",
intent="I already clicked it and typed my password. how do I report the email?")

sc("it_help",
"""U: The 3rd floor printer, PRN-3B, says it's offline.
A: I see PRN-3B is online on our side. Try removing and re-adding it from the printer list.
U: I don't see it in the list when I try to add it. what next?""",
"""U: PRN-3B, the printer on the 3rd floor, is showing as offline.
A: On our end PRN-3B looks online. Could you remove it and add it back from the printer list?
U: It doesn't appear in the list when I go to add it. What now?""",
late=[("I don't see it in the list when I try to add it.", "I don't see it in the list, and I'm working from home today.")],
flip="""U: I'm trying to connect to the conference room TV with ScreenCast.
A: Open the ScreenCast app and choose the room name from the list.""",
intent="I don't see it in the list when I try to add it. can I print to a different floor instead?")

sc("it_help",
"""U: Mailbridge says my mailbox is almost full. I'm at 48GB.
A: Standard mailboxes are 50GB. You can turn on the online archive, which gives you an extra 100GB.
U: will turning it on move my old emails automatically?""",
"""U: I'm at 48GB and Mailbridge warns that my mailbox is nearly full.
A: The standard mailbox limit is 50GB. Enabling the online archive adds another 100GB.
U: If I enable it, do older emails get moved over on their own?""",
late=[("old emails", "calendar items")],
flip="""U: IT is rolling out a new retention policy that deletes emails older than 3 years.
A: Yes, the policy applies from March 1, but you can turn on a personal archive to keep older mail.""",
intent="will turning it on slow down Outlook?")

sc("it_help",
"""U: I got a new phone and my Authly MFA app is gone. I still have the old phone.
A: Good. Since you still have the old phone, you can transfer your Authly accounts using Export Accounts in the app.
U: ok, how do I do that?""",
"""U: New phone, and the Authly MFA app didn't come over. The old phone still works.
A: Since you've still got the old phone, use Export Accounts in Authly to move everything over.
U: Right, how exactly do I do that?""",
early=[("I still have the old phone.", "The old phone was stolen."),
       ("Good. Since you still have the old phone, you can transfer your Authly accounts using Export Accounts in the app.",
        "Since the old phone is gone, the helpdesk will need to reset your MFA after verifying your identity.")],
late=[("ok, how do I do that?", "ok, how do I do that? the old phone is an Android and the new one is an iPhone")],
flip="""U: I want to move my WhatsApp chats to my new phone.
A: WhatsApp has a built-in transfer option when you set up the new phone.""",
intent="ok, but can I use text message codes instead of the app?")

sc("it_help",
"""U: My Windows work laptop has only 2GB of free disk space left.
A: Let's free some up. The Downloads folder and old Teams cache files are common culprits.
U: how do I clear the Teams cache?""",
"""U: There's only 2GB free on my Windows work laptop.
A: We can clear some space. Old files in Downloads and the Teams cache usually take up the most.
U: What are the steps to clear the Teams cache?""",
early=[("Windows", "Mac")],
late=[("the Teams cache", "the Zoomly cache")],
intent="how do I stop the Teams cache from growing again?")
