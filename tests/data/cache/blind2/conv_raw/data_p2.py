# Hand-written scenarios, part 2: internet, utilities, tax, travel.
from convlib import sc

# ---------------------------------------------------------------- internet
sc("internet",
"""U: I have Fibrelane's 100 Mbps plan. We have 5 people working and streaming at home.
A: It depends on what everyone does. A video call uses about 5 Mbps and a 4K stream about 25 Mbps.
U: would the next tier up be enough?""",
"""U: We're on Fibrelane 100 Mbps, and there are 5 of us working and streaming at home.
A: It depends on usage: a video call takes roughly 5 Mbps and a 4K stream roughly 25 Mbps.
U: Is the next speed tier up enough for us?""",
early=[("100 Mbps", "500 Mbps")],
late=[("would the next tier up be enough?", "would the next tier up be enough once my brother moves in with his 3 kids?")],
flip="""U: I'm choosing a Fibrelane mesh Wi-Fi kit for a 3-storey house.
A: The Mesh Basic kit has 2 nodes and covers about 2,500 sq ft.""",
intent="how much more would the next tier up cost?")

sc("internet",
"""U: My NetHarbor internet was down from Friday to Monday.
A: I'm sorry. I can see an area outage affecting your address for about 72 hours.
U: do I get a credit for that?""",
"""U: Internet with NetHarbor was out from Friday through Monday
A: Sorry about that. There was an area outage at your address that lasted about 72 hours.
U: Will I get credited for it?""",
early=[("from Friday to Monday", "for about 2 hours this morning"), ("for about 72 hours", "for about 2 hours")],
late=[("do I get a credit for that?", "do I get a credit for that? I'm on a business plan")],
flip="""U: NetHarbor's technician missed my installation appointment yesterday.
A: I'm sorry. I can see the missed appointment and can reschedule you for Thursday.""",
intent="can I cancel my contract because of that?")

sc("internet",
"""U: I'm moving into a new build apartment and want Fibrelane there.
A: New builds often have Fibrelane fiber pre-wired. If the building is already connected, activation is self-install and free.
U: how long does it take to get connected?""",
"""U: I'll be living in a newly built apartment and I'd like Fibrelane service there.
A: Newly built properties are usually pre-wired for Fibrelane fiber; if yours is, you can self-install for free.
U: what's the wait to get online?""",
early=[("a new build apartment", "a 1920s house")],
late=[("how long does it take to get connected?", "how long does it take to get connected if the building isn't wired yet?")],
flip="""U: My Fibrelane fiber line was cut by construction work on my street, so I filed a fault report.
A: Thanks, ticket FL-88213 is open and a repair crew has been assigned.""",
intent="how much does it cost to get connected?")

sc("internet",
"""U: My NetHarbor router is in the basement and the Wi-Fi upstairs is weak.
A: Basements are tough for Wi-Fi. NetHarbor rents a mesh extender for $8 a month, or you can move the router to a more central spot.
U: can I move it myself?""",
"""U: the Wi-Fi upstairs is weak, my NetHarbor router is down in the basement
A: Basements do block Wi-Fi. You could rent NetHarbor's mesh extender for $8/month or relocate the router somewhere more central.
U: Am I allowed to relocate it on my own?""",
early=[("NetHarbor router", "NetHarbor fiber gateway")],
late=[("can I move it myself?", "can I move it myself if there's no cable outlet upstairs?")],
flip="""U: NetHarbor is running a new cable line to my house and the tech put the junction box on the front wall.
A: The exterior box location is chosen to reach the nearest pole, but you can ask about alternatives.""",
intent="can I buy my own mesh system instead?")

sc("internet",
"""U: Does Skyreach have a data cap? I'm on the Standard 50GB plan.
A: Yes. On Standard 50GB, after 50GB your speeds are reduced to 1 Mbps until your monthly reset. Nighttime use from 2am to 8am doesn't count.
U: if I download a 60GB game at 3am, will it count?""",
"""U: I'm on Skyreach Standard 50GB. Is there a data cap?
A: There is: past 50GB, speeds drop to 1 Mbps until the monthly reset, but anything used between 2am and 8am is free.
U: Would a 60GB game download at 3am count against it?""",
early=[("Standard 50GB plan", "Unlimited Pro plan"),
       ("Yes. On Standard 50GB, after 50GB your speeds are reduced to 1 Mbps until your monthly reset. Nighttime use from 2am to 8am doesn't count.",
        "Unlimited Pro has no hard cap, but after 300GB in a month you may be deprioritized during busy hours, at any time of day.")],
late=[("at 3am", "at 9pm")],
flip="""U: Does Skyreach give bonus data for streaming on the Family plan?
A: On Family, streaming from partner apps doesn't count toward your data, but game downloads count at any hour.""",
intent="if I download a 60GB game at 3am, how long will it take?")

sc("internet",
"""U: I'm moving from Elm Street to Harbor Avenue across town in May. I have NetHarbor.
A: NetHarbor serves Harbor Avenue, so you can transfer your service. Moves are free once every 12 months.
U: I moved last August too. will it cost anything?""",
"""U: NetHarbor customer here. I'm relocating in May from Elm Street to Harbor Avenue across town.
A: Good news, Harbor Avenue is in our service area, so your service can move with you. One move every 12 months is free.
U: Will there be a charge? I also moved last August.""",
early=[("to Harbor Avenue across town", "to Harbor Avenue in Westfield, two states away"),
       ("NetHarbor serves Harbor Avenue, so you can transfer your service.",
        "NetHarbor doesn't serve Westfield, so you'd need to cancel and return your equipment.")],
late=[("last August", "two years ago")],
flip="""U: NetHarbor wants to swap my modem since I'm moving anyway.
A: Customers who move get one free modem swap every 12 months.""",
intent="I moved last August too. can I schedule the transfer online?")

sc("internet",
"""U: I run a small home server. Does Fibrelane offer static IPs on residential plans?
A: Not on residential plans. Static IPs are only available on Fibrelane Business, starting at $79 a month.
U: how much extra would 5 static IPs be?""",
"""U: Can I get a static IP on a Fibrelane residential plan? It's for a little server I host at home.
A: Residential plans don't include static IPs; you'd need Fibrelane Business, which starts at $79/month.
U: What's the added cost for 5 static IPs?""",
early=[("Fibrelane", "NetHarbor")],
late=[("5 static IPs", "1 static IP")],
flip="""U: Our office VPN provider, Tunnelsy, charges per dedicated IP.
A: Tunnelsy's dedicated IP add-on is $5 per IP per month on top of your plan.""",
intent="are 5 static IPs the most I can get?")

sc("internet",
"""U: I pay for NetHarbor 500 Mbps but I'm only getting 90 on my laptop over Wi-Fi.
A: Let's check. Can you test with a cable plugged directly into the router?
U: on cable I get 480. so what's the problem?""",
"""U: Laptop only gets about 90 Mbps on Wi-Fi but my NetHarbor plan is 500 Mbps.
A: Let's narrow it down. What do you get with a cable straight into the router?
U: Wired it's 480. What's causing it then?""",
early=[("500 Mbps", "1 Gbps")],
late=[("480", "95")],
flip="""U: My work VPN is really slow at home on NetHarbor.
A: VPNs route traffic through your company's servers, which often caps speed. Can you run a test with the VPN off and one on a cable?""",
intent="on cable I get 480. how do I get Wi-Fi closer to that?")

sc("internet",
"""U: My Skyreach bill went up from $89 to $109. Why?
A: Your 12-month promotional rate ended last cycle, so you're now on the standard Skyreach Plus price.
U: can I get the promo again?""",
"""U: why did my Skyreach bill jump from $89 to $109?
A: The 12-month promotional price expired last cycle, so you're now paying the standard Skyreach Plus rate.
U: Is there a way to get that promo back?""",
late=[("can I get the promo again?", "can I get the promo again if I sign another 2-year agreement?")],
flip="""U: I saw Skyreach advertising $49 a month for new customers.
A: That's the new-customer promo for the Skyreach Lite plan, valid for 12 months.""",
intent="can I switch to a cheaper plan instead?")

# ---------------------------------------------------------------- utilities
sc("utilities",
"""U: I'm on Greyridge's Time-of-Use electric rate.
A: On Time-of-Use, electricity costs 34 cents/kWh from 4 to 9pm and 12 cents/kWh the rest of the day.
U: if I charge my EV overnight, about 40 kWh a week, what would that cost me per month?""",
"""U: I have the Time-of-Use rate with Greyridge for my electricity.
A: Your rate is 34 cents per kWh between 4 and 9pm and 12 cents per kWh at all other times.
U: Roughly what would overnight EV charging cost monthly, at around 40 kWh a week?""",
early=[("Time-of-Use electric rate", "Standard flat electric rate"),
       ("On Time-of-Use, electricity costs 34 cents/kWh from 4 to 9pm and 12 cents/kWh the rest of the day.",
        "On the Standard rate, electricity costs 19 cents/kWh at any time of day.")],
late=[("40 kWh", "90 kWh")],
flip="""U: There's a public Voltway charger at my apartment garage that charges 45 cents per kWh.
A: That's typical for Level 2 public charging; Voltway also adds a $1 session fee.""",
intent="if I charge my EV overnight, about 40 kWh a week, how much would I save compared to charging at 6pm?")

sc("utilities",
"""U: My Clearwater water bill is $240, normally it's about $60.
A: That's a big jump. Your meter shows 18,000 gallons this period versus your usual 4,500, which often means a leak.
U: we found a running toilet and fixed it. can I get an adjustment?""",
"""U: This Clearwater bill is $240 and we usually pay around $60.
A: That is a big increase. The meter recorded 18,000 gallons compared with your usual 4,500, which usually points to a leak.
U: It was a toilet that kept running; it's fixed now. Is an adjustment possible?""",
early=[("$240", "$75"), ("That's a big jump.", "That's a bit higher than usual."), ("18,000 gallons", "5,600 gallons"), ("which often means a leak", "which is only slightly above normal")],
late=[("and fixed it", "but haven't fixed it yet")],
flip="""U: Clearwater says my last meter reading was estimated because they couldn't get to the meter.
A: Yes, the reading was estimated at 18,000 gallons; once we get an actual read the bill will be recalculated.""",
intent="we found a running toilet and fixed it. can I pay the bill in installments?")

sc("utilities",
"""U: I'm moving into an apartment and need to start Solstice Energy service. Do I need a deposit?
A: Solstice may require a deposit based on a soft credit check, or you can provide a letter of good payment history from your previous utility.
U: I've never had utilities in my name before. what would the deposit be?""",
"""U: Starting Solstice Energy at my new apartment. will they want a deposit?
A: Possibly. Solstice runs a soft credit check, or you can skip it by sending a good-payment-history letter from your last utility.
U: This is the first time utilities will be in my name. How much would the deposit be?""",
early=[("an apartment", "a four-bedroom house")],
late=[("I've never had utilities in my name before.", "I had Greyridge for 5 years with no late payments.")],
flip="""U: I'm leasing an apartment from Harbourline Properties and they mentioned a utility deposit.
A: Harbourline collects a $150 utility deposit with the lease when water and trash are included in the rent.""",
intent="I've never had utilities in my name before. when would the deposit be refunded?")

sc("utilities",
"""U: I lost my job and can't pay my Greyridge bill this month. It's $180.
A: I'm sorry to hear that. Greyridge offers payment arrangements that spread a past-due balance over up to 6 months.
U: so how much extra would I pay each month?""",
"""U: I've just been laid off and my Greyridge bill of $180 is more than I can pay this month.
A: Sorry you're dealing with that. We offer payment arrangements that split an overdue balance across as many as 6 months.
U: What would the extra monthly amount be?""",
early=[("$180", "$540")],
late=[("so how much extra would I pay each month?", "so how much extra would I pay each month if I spread it over 3 months?")],
flip="""U: Greyridge is offering a smart thermostat for $180 that I can pay off on my bill.
A: Yes, the thermostat can be added to your bill in 12 interest-free installments.""",
intent="so would I also qualify for the low-income discount?")

sc("utilities",
"""U: The power's out on my whole street. I'm a Greyridge customer.
A: I see a reported outage in your area affecting about 1,200 customers. Crews are on site.
U: when will it be back?""",
"""U: Greyridge customer. our entire street has no power
A: There's an outage reported in your area affecting roughly 1,200 customers, and crews are already there.
U: Any idea when power will be restored?""",
early=[("on my whole street", "just in my house, the neighbors have lights"),
       ("I see a reported outage in your area affecting about 1,200 customers. Crews are on site.",
        "There's no outage reported for your area, so it may be an issue at your property.")],
late=[("when will it be back?", "when will it be back? I have medical equipment that needs power")],
flip="""U: I'm trying to log in to my Greyridge account but the website is down.
A: We're doing scheduled maintenance on the site tonight.""",
intent="will I get a credit for the outage?")

sc("utilities",
"""U: Does Clearwater offer a rebate for replacing my lawn with drought-tolerant plants?
A: Yes, the Clearwater Turf Swap rebate pays $2 per square foot of lawn removed, up to 1,000 sq ft.
U: my front lawn is about 600 sq ft. how much would I get?""",
"""U: Is there a Clearwater rebate if I swap my lawn for drought-tolerant plants?
A: There is. Turf Swap pays $2 per square foot of removed lawn, capped at 1,000 square feet.
U: The front lawn is roughly 600 sq ft; what would the rebate come to?""",
early=[("replacing my lawn with drought-tolerant plants", "replacing my lawn with artificial turf"),
       ("Yes, the Clearwater Turf Swap rebate pays $2 per square foot of lawn removed, up to 1,000 sq ft.",
        "Artificial turf isn't eligible. The Turf Swap rebate only pays $2 per square foot for lawn replaced with drought-tolerant plants.")],
late=[("600 sq ft", "1,500 sq ft")],
flip="""U: A landscaping company offered to buy the sod from my front lawn at 50 cents a square foot.
A: That's a fair price for healthy sod; they'd usually cut and haul it themselves.""",
intent="my front lawn is about 600 sq ft. how long does the rebate take to arrive?")

sc("utilities",
"""U: Can I change my Solstice Energy due date? Right now it's the 3rd.
A: Yes, you can pick any due date between the 1st and 28th, once every 12 months.
U: I'd like the 20th. I changed it 2 months ago though. is that ok?""",
"""U: Is it possible to move my Solstice Energy due date? It's currently the 3rd.
A: It is. Choose any date from the 1st to the 28th, and you can change it once every 12 months.
U: The 20th would be best. But I already changed it 2 months ago, does that matter?""",
early=[("Right now it's the 3rd.", "Right now it's the 3rd, and I'm on the prepaid plan.")],
late=[("2 months ago", "3 years ago")],
flip="""U: My Solstice Energy autopay is set for the 3rd but my paycheck lands later.
A: You can move the autopay draft date to any day up to your due date, which is the 15th.""",
intent="I'd like the 20th. will that change take effect this month?")

sc("utilities",
"""U: Clearwater Municipal also does our trash. Our recycling wasn't picked up on Tuesday.
A: Sorry about that. I've logged a missed collection report for your address.
U: should I leave it out or bring it back in?""",
"""U: Our trash is through Clearwater Municipal too. recycling didn't get collected on Tuesday.
A: Apologies. I've filed a missed-collection report for your address.
U: Do I leave the bin out or take it back in?""",
early=[("on Tuesday", "two weeks ago")],
late=[("should I leave it out or bring it back in?", "should I leave it out or bring it back in? there's a windstorm coming tonight")],
flip="""U: I borrowed a Clearwater rain barrel for the water-saving pilot and the pilot has ended.
A: Thanks for participating! We'll collect pilot equipment from the curb next Monday.""",
intent="should I report it again if it's not collected tomorrow?")

sc("utilities",
"""U: I got a disconnection notice from Greyridge. I owe $420 and it says shutoff on the 15th.
A: I see the notice. To stop the disconnection, you'll need to pay at least the past-due amount of $420 or set up a payment plan before the 15th.
U: if I pay half today, will that stop it?""",
"""U: Greyridge sent me a disconnection notice: $420 owed, shutoff date the 15th.
A: To avoid the disconnection, pay at least the $420 past-due balance or arrange a payment plan before the 15th.
U: Would paying half of it today prevent the shutoff?""",
early=[("I got a disconnection notice from Greyridge.", "I got a disconnection notice from Greyridge, and I'm enrolled in the medical certificate program.")],
late=[("if I pay half today", "if I pay all of it today")],
flip="""U: I'm behind on my Fibrelane internet bill and they warned me about suspension.
A: Fibrelane keeps your service active as long as you pay at least 50% of the overdue balance by the suspension date.""",
intent="if I pay half today, how much will I owe next month?")

# ---------------------------------------------------------------- tax
sc("tax",
"""U: I'm filing single for 2025. What's my standard deduction?
A: For 2025, the standard deduction for single filers is $15,750.
U: and if my income is $52,000, what's my taxable income?""",
"""U: What standard deduction do I get as a single filer for tax year 2025?
A: Single filers get a $15,750 standard deduction for 2025.
U: So with $52,000 of income, what's taxable?""",
early=[("filing single", "filing jointly with my wife"), ("for single filers is $15,750", "for married couples filing jointly is $31,500")],
late=[("$52,000", "$40,000")],
flip="""U: My state, Norland, taxes income but exempts the first $10,000 for each filer.
A: Right, Norland's personal exemption is $10,000 per filer and there's no standard deduction on top of it.""",
intent="and if my income is $52,000, what tax bracket am I in?")

sc("tax",
"""U: I made $30,000 freelancing in 2025 as a sole proprietor.
A: You'll owe income tax plus self-employment tax of 15.3% on 92.35% of your net earnings.
U: roughly how much self-employment tax is that?""",
"""U: As a sole proprietor I earned $30,000 from freelancing in 2025.
A: On top of income tax you'll pay self-employment tax: 15.3% of 92.35% of your net self-employment earnings.
U: Ballpark, what does that self-employment tax come to?""",
early=[("$30,000", "$80,000")],
late=[("roughly how much self-employment tax is that?", "roughly how much self-employment tax is that if I had $6,000 of business expenses?")],
flip="""U: My freelance income came through an S corp that I set up, and I pay myself a salary.
A: In an S corp your salary is subject to payroll taxes, but the remaining profit isn't subject to self-employment tax.""",
intent="roughly how much should I set aside for income tax on top of that?")

sc("tax",
"""U: I filed my 2024 return in March and just found a 1099-INT for $85 I forgot.
A: You'll still need to report it. You can file an amended return using Form 1040-X.
U: will I have to pay a penalty?""",
"""U: I already filed for 2024 back in March, but now I've got a 1099-INT for $85 that I left off.
A: It still needs to be reported. File Form 1040-X to amend the return.
U: Is there going to be a penalty?""",
early=[("$85", "$18,000")],
late=[("will I have to pay a penalty?", "will I have to pay a penalty if the IRS already sent me a notice about it?")],
flip="""U: I'm going to file my 2025 return about 2 months late, and I owe money.
A: Late filing when you owe tax can trigger a failure-to-file charge of 5% of the unpaid tax per month.""",
intent="how long does an amended return take to process?")

sc("tax",
"""U: I work from home full-time as a self-employed software contractor.
A: Thanks. Do you have a space you use regularly and exclusively for work?
U: yes, a spare bedroom used only for work. can I deduct it?""",
"""U: I'm a self-employed software contractor and I work from home full-time.
A: Thanks. Do you have a space you use regularly and exclusively for work?
U: Yes, a spare bedroom that's only my office. Can I take a deduction for it?""",
early=[("as a self-employed software contractor", "as a W-2 employee for a software company")],
late=[("yes, a spare bedroom used only for work.", "sort of, it's the dining table, we eat there too.")],
flip="""U: I'm a W-2 employee and my company went fully remote this year.
A: Got it. Do you have a space at home you use only for work?""",
intent="yes, a spare bedroom used only for work. can I also deduct my internet bill?")

sc("tax",
"""U: I e-filed my federal return on February 10th.
A: Thanks. Processing times depend on how you filed and whether you chose direct deposit.
U: it's been 5 weeks. should I be worried?""",
"""U: My federal return was e-filed on February 10th.
A: Okay. How long it takes depends on the filing method and whether you picked direct deposit.
U: 5 weeks have gone by. Is that something to worry about?""",
early=[("I e-filed my federal return", "I mailed my paper federal return")],
late=[("5 weeks", "10 days")],
flip="""U: I mailed my passport renewal application.
A: Routine passport renewals by mail currently take 4 to 6 weeks.""",
intent="it's been 5 weeks. how do I check the status?")

sc("tax",
"""U: I sold some shares of an index fund in 2025 for a $6,000 gain. I bought them in 2019.
A: Because you held them more than a year, that's a long-term capital gain, taxed at 0%, 15%, or 20% depending on your taxable income.
U: my taxable income is about $70,000 and I'm single. what rate applies?""",
"""U: In 2025 I sold index fund shares I'd bought back in 2019 and made a $6,000 gain.
A: You held them over a year, so it's a long-term gain, taxed at 0%, 15% or 20% based on your taxable income.
U: I'm single with roughly $70,000 taxable income. Which rate is it?""",
early=[("I bought them in 2019", "I bought them in March 2025"),
       ("Because you held them more than a year, that's a long-term capital gain, taxed at 0%, 15%, or 20% depending on your taxable income.",
        "Because you held them less than a year, that's a short-term capital gain, taxed at your ordinary income rates.")],
late=[("$70,000", "$40,000")],
flip="""U: I won $6,000 in a raffle this year.
A: Raffle winnings are ordinary income; you'll report them as other income on your return.""",
intent="my taxable income is about $70,000 and I'm single. how much tax do I owe on the gain?")

sc("tax",
"""U: Can I claim my nephew as a dependent? He's 19 and lives with me.
A: A nephew can be a qualifying child if he lives with you more than half the year and is under 19, or under 24 and a full-time student.
U: he's in college full-time. does that mean I can claim him?""",
"""U: My nephew is 19 and lives with me. Could I claim him as a dependent?
A: He can count as a qualifying child if he's lived with you for over half the year and is under 19, or a full-time student under 24.
U: He's a full-time college student, so can I claim him?""",
early=[("He's 19", "He's 26")],
late=[("he's in college full-time.", "he dropped out and works part-time now.")],
flip="""U: The Norland state college grant lets a household claim one relative who's in school.
A: The Norland Family Grant covers one relative per household attending college full-time.""",
intent="he's in college full-time. can I also claim the education credit for his tuition?")

sc("tax",
"""U: I'm using TaxNest to file. Is it free?
A: TaxNest Free covers simple returns: W-2 income, standard deduction, and the child tax credit. Other situations need Deluxe ($59) or Premier ($99).
U: I have W-2 income and some crypto sales. which version do I need?""",
"""U: Filing with TaxNest this year. do I have to pay?
A: The free tier handles simple returns: W-2 wages, standard deduction, child tax credit. Anything else needs Deluxe at $59 or Premier at $99.
U: I've got W-2 wages plus some crypto I sold. What version should I use?""",
early=[("I'm using TaxNest to file.", "I'm using Ledgerly to file."),
       ("TaxNest Free covers simple returns: W-2 income, standard deduction, and the child tax credit. Other situations need Deluxe ($59) or Premier ($99).",
        "Ledgerly Basic is free for W-2 income and investments, including crypto; self-employment needs Ledgerly Pro ($79).")],
late=[("some crypto sales", "a mortgage I want to itemize")],
flip="""U: TaxNest also has a state filing add-on, right?
A: Yes. TaxNest offers State Basic for $29 and State Plus, for multi-state returns, for $49.""",
intent="I have W-2 income and some crypto sales. how much would that version cost?")

sc("tax",
"""U: I don't think I'll finish my 2025 taxes by April 15.
A: You can file Form 4868 by April 15, 2026 to get an automatic extension to October 15, 2026.
U: does that give me more time to pay too?""",
"""U: Looks like I won't get my 2025 return done by April 15.
A: File Form 4868 by April 15, 2026 and you'll get an automatic extension until October 15, 2026.
U: Does the extension also push back when I have to pay?""",
early=[("I don't think I'll finish my 2025 taxes by April 15.", "I live in Spain and I don't think I'll finish my 2025 US taxes by April 15.")],
late=[("does that give me more time to pay too?", "does that give me more time to pay too, even though I'm due a refund?")],
flip="""U: My landlord gave me an extra month to sign my lease renewal, until May 31.
A: Great, that gives you until May 31 to sign the renewal.""",
intent="does that extension apply to my state return too?")

# ---------------------------------------------------------------- travel
sc("travel",
"""U: I'm flying Skyline Air basic economy from Chicago to Denver.
A: Basic economy on Skyline includes a personal item only. A carry-on is $35, and checked bags are $40 for the first and $50 for the second.
U: how much for one carry-on and two checked bags?""",
"""U: My Skyline Air flight Chicago to Denver is basic economy.
A: On Skyline basic economy you only get a personal item; carry-ons cost $35, and checked bags are $40 for the first and $50 for the second.
U: What's the total for a carry-on plus two checked bags?""",
early=[("basic economy", "main cabin"),
       ("Basic economy on Skyline includes a personal item only. A carry-on is $35",
        "Main cabin on Skyline includes a personal item and a free carry-on")],
late=[("two checked bags", "no checked bags")],
flip="""U: I'm taking Meridian Rail from Chicago to Denver instead of flying.
A: Meridian allows two carry-ons free and checked bags at $20 each.""",
intent="what are the size limits for one carry-on and two checked bags?")

sc("travel",
"""U: I booked a Skyline Air flight to Austin for May 3rd on a Main Cabin fare.
A: Main Cabin fares have no change fee; you only pay the fare difference if the new flight costs more.
U: can I move it to May 10th?""",
"""U: I have a Main Cabin fare on Skyline Air to Austin on May 3rd.
A: There's no change fee on Main Cabin, just any fare difference if the new flight is more expensive.
U: Is switching to May 10th possible?""",
early=[("Main Cabin fare", "Basic Economy fare"),
       ("Main Cabin fares have no change fee; you only pay the fare difference if the new flight costs more.",
        "Basic Economy fares can't be changed once 24 hours have passed since booking.")],
late=[("can I move it to May 10th?", "can I move it to May 10th? I booked it through Tripvale, not directly.")],
flip="""U: I have a dentist appointment with Brightsmile Dental on May 3rd.
A: Your appointment is confirmed for May 3rd at 10:30am.""",
intent="can I cancel it instead of moving it?")

sc("travel",
"""U: I booked 2 nights at Harbor Inn Seaside for June 14 on the flexible rate.
A: The flexible rate can be cancelled free of charge up to 48 hours before check-in.
U: if I cancel on June 13, will I be charged?""",
"""U: I have a reservation at Harbor Inn Seaside, 2 nights from June 14, flexible rate.
A: With the flexible rate you can cancel for free until 48 hours before check-in.
U: Would I be charged if I cancelled on June 13?""",
early=[("flexible rate", "advance purchase rate"),
       ("The flexible rate can be cancelled free of charge up to 48 hours before check-in.",
        "The advance purchase rate is prepaid and non-refundable once booked.")],
late=[("June 13", "June 10")],
flip="""U: My Meridian Rail ticket for June 14 is a Saver fare.
A: Saver fares can be cancelled for a 25% fee up to the day before departure.""",
intent="if I cancel on June 13, can I rebook for July instead?")

sc("travel",
"""U: I'm a US citizen flying to Thailand for 2 weeks in August.
A: Thailand requires your passport to be valid for at least 6 months beyond your arrival date.
U: my passport expires in December. am I ok?""",
"""U: US passport holder here, going to Thailand for two weeks this August.
A: For Thailand, your passport needs at least 6 months of validity remaining past the day you arrive.
U: Mine runs out in December. Is that a problem?""",
early=[("Thailand", "Mexico"),
       ("Thailand requires your passport to be valid for at least 6 months beyond your arrival date.",
        "Mexico only requires your passport to be valid for the length of your stay.")],
late=[("in December", "in 2029")],
flip="""U: I'm applying for Global Entry and my interview is in August.
A: Bring a valid passport and one proof of residence to the interview.""",
intent="my passport expires in December. how fast can I renew it?")

sc("travel",
"""U: I'm taking Meridian Rail from Boston to New York with my 2 kids, ages 4 and 9.
A: On Meridian, children under 2 ride free on a lap, and kids 2 to 12 get 50% off the adult fare.
U: the adult fare is $80. what's the total for the three of us?""",
"""U: Boston to New York on Meridian Rail, me plus my kids who are 4 and 9.
A: Meridian lets under-2s travel free on a lap, and children from 2 to 12 pay half the adult fare.
U: If an adult ticket is $80, what do the three of us pay in total?""",
early=[("4 and 9", "1 and 9")],
late=[("$80", "$120")],
flip="""U: I'm taking the Seacoast Ferry with my kids, ages 4 and 9.
A: On Seacoast Ferry, kids under 5 ride free and ages 5 to 15 pay 75% of the adult fare.""",
intent="the adult fare is $80. is there a family discount on top of that?")

sc("travel",
"""U: I'm 23 and want to rent a car from Drivewell at the Phoenix airport.
A: Drivewell rents to drivers 21 and up; drivers under 25 pay a young driver fee of $25 a day.
U: for a 5-day rental, how much is that fee?""",
"""U: Can a 23-year-old rent from Drivewell at Phoenix airport? That's me.
A: Yes. Drivewell's minimum age is 21, but renters under 25 pay a $25 daily young driver fee.
U: What would that fee total for a 5-day rental?""",
early=[("23", "27")],
late=[("5-day", "12-day")],
flip="""U: Drivewell wants to add a child seat to my Phoenix rental.
A: Child seats are $15 a day, capped at $75 per rental.""",
intent="for a 5-day rental, can I avoid that fee?")

sc("travel",
"""U: I booked a Tripvale package to Cancun for 2 adults, $3,200 total.
A: Thanks! Tripvale packages require a 20% deposit at booking, with the balance due 45 days before departure.
U: how much do I owe now?""",
"""U: Booked a Cancun package on Tripvale for two adults, total $3,200.
A: Great. Tripvale asks for a 20% deposit when you book and the remainder 45 days prior to departure.
U: What do I need to pay today?""",
early=[("$3,200", "$4,500")],
late=[("how much do I owe now?", "how much do I owe now if I add a third traveler for $1,100?")],
flip="""U: Cancun hotels charge a local tourist tax, right?
A: Yes, there's a $12 per person per night tourist tax that's paid at check-in.""",
intent="how much would I lose if I cancel now?")

sc("travel",
"""U: I have Skyline Air Gold status. Can I use the Skyline Lounge in Seattle?
A: Gold members get lounge access when flying internationally on Skyline or partners, plus one guest.
U: I'm flying Seattle to Portland tomorrow. can I bring my husband in?""",
"""U: Skyline Gold member here. am I allowed into the Seattle Skyline Lounge?
A: With Gold you can use the lounge on international Skyline or partner flights and bring one guest.
U: Tomorrow I'm on a Seattle to Portland flight. Can my husband come in with me?""",
early=[("Gold status", "Platinum status"),
       ("Gold members get lounge access when flying internationally on Skyline or partners, plus one guest.",
        "Platinum members get lounge access on any Skyline flight, domestic or international, plus one guest.")],
late=[("Portland", "Tokyo")],
flip="""U: I have a Pulse Fitness membership that works at all locations, including Portland.
A: Yes, the All Clubs tier lets you use any Pulse location and bring one guest per visit.""",
intent="I'm flying Seattle to Portland tomorrow. can I get an upgrade?")

sc("travel",
"""U: My Meridian Rail train from Philadelphia was 75 minutes late.
A: Sorry about that. Meridian offers compensation of 25% of the ticket for delays of 60 to 119 minutes and 50% for 2 hours or more.
U: my ticket was $120. what would I get?""",
"""U: the Meridian Rail train I took from Philadelphia arrived 75 minutes late
A: Sorry for the delay. Meridian compensates 25% of the fare for delays of 60 to 119 minutes and 50% for delays of two hours or more.
U: I paid $120 for the ticket. How much would I be owed?""",
early=[("75 minutes", "two and a half hours")],
late=[("$120", "$60")],
flip="""U: I bought a Meridian ticket but now I can't travel.
A: Standard fares are refundable minus a 15% cancellation fee.""",
intent="my ticket was $120. how do I submit the claim?")
