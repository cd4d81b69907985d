# Hand-written scenarios, part 4: rental housing, healthcare admin, cooking, programming.
from convlib import sc

# ---------------------------------------------------------------- rental_housing
sc("rental_housing",
"""U: I signed a 12-month lease with Harbourline starting March 1. I need to move out early for a job.
A: Harbourline's early termination option lets you end the lease with 60 days' notice and a fee equal to one month's rent.
U: my rent is $1,650. if I give notice today, what's the total cost?""",
"""U: I need to leave my Harbourline apartment early for a new job. The lease is 12 months from March 1.
A: Harbourline has an early termination option: 60 days' notice plus a fee of one month's rent.
U: Rent is $1,650. What would it cost me in total if I give notice today?""",
early=[("12-month lease", "month-to-month lease"),
       ("Harbourline's early termination option lets you end the lease with 60 days' notice and a fee equal to one month's rent.",
        "On a month-to-month lease you just need to give 30 days' written notice, with no fee.")],
late=[("$1,650", "$2,100")],
flip="""U: Harbourline charges a fee if I transfer to another Harbourline building mid-lease, right?
A: Yes, there's an internal transfer fee of 50% of one month's rent.""",
intent="my rent is $1,650. if I give notice today, when would my last day be?")

sc("rental_housing",
"""U: I moved out of my apartment on June 30th. My landlord still has my $2,000 deposit.
A: In most states, landlords must return the deposit, or an itemized list of deductions, within 14 to 30 days. Which state are you in?
U: Oregon. It's been 5 weeks. what can I do?""",
"""U: Moved out June 30th and my landlord hasn't given back my $2,000 security deposit.
A: Most states require the deposit, or an itemized list of deductions, within 14 to 30 days. What state is this in?
U: Oregon, and it's been 5 weeks now. What are my options?""",
early=[("My landlord still has my $2,000 deposit.", "My landlord returned $1,400 of my $2,000 deposit with no explanation.")],
late=[("5 weeks", "2 weeks")],
flip="""U: I paid a landlord a $2,000 holding deposit for an apartment, but then they cancelled my move-in.
A: If the landlord cancels, a holding deposit generally has to be refunded in full. Which state is the apartment in?""",
intent="Oregon. It's been 5 weeks. can they charge me for normal wear and tear?")

sc("rental_housing",
"""U: My landlord just told me rent is going up by $300 starting next month. I'm on a month-to-month lease in California.
A: In California, increases of 10% or less need 30 days' notice, and increases over 10% need 90 days' notice.
U: my current rent is $2,400. is this notice enough?""",
"""U: I rent month-to-month in California and my landlord says the rent goes up $300 next month.
A: California requires 30 days' notice for increases of up to 10% and 90 days' notice for anything above 10%.
U: I pay $2,400 now. Is that enough notice?""",
early=[("month-to-month lease", "fixed-term lease that runs until December")],
late=[("$2,400", "$3,500")],
flip="""U: I'm moving out of my California month-to-month apartment at the end of next month, and I told my landlord today.
A: Tenants on month-to-month leases have to give at least 30 days' written notice.""",
intent="my current rent is $2,400. is the increase itself legal?")

sc("rental_housing",
"""U: The heat in my Harbourline apartment stopped working. It's 50 degrees inside.
A: I'm sorry. No heat in winter is an emergency repair. Harbourline's emergency line dispatches a technician within 24 hours.
U: how do I submit the request?""",
"""U: No heat in my Harbourline unit. It's 50 degrees in here.
A: Sorry about that! Loss of heat in winter counts as an emergency, and Harbourline's emergency line sends a technician within 24 hours.
U: What's the way to put in the request?""",
early=[("The heat in my Harbourline apartment stopped working. It's 50 degrees inside.", "The dishwasher in my Harbourline apartment stopped working."),
       ("I'm sorry. No heat in winter is an emergency repair. Harbourline's emergency line dispatches a technician within 24 hours.",
        "Sorry about that. A broken dishwasher is a routine repair, usually handled within 5 business days.")],
flip="""U: I want to paint my bedroom in my Harbourline apartment.
A: Harbourline allows painting with written approval, and you may need to repaint before you move out.""",
intent="can I get a rent reduction for the days without heat?")

sc("rental_housing",
"""U: Can I sublet my apartment for the summer? My lease is with Harbourline.
A: Harbourline allows sublets of up to 6 months with written approval and a $150 processing fee. The subtenant must pass screening.
U: I'm going to be away June to August. does my friend need to go through screening too?""",
"""U: My lease is through Harbourline. am I allowed to sublet over the summer?
A: Yes, with written approval: sublets can be up to 6 months, there's a $150 processing fee, and the subtenant has to pass screening.
U: I'll be gone June through August. Does my friend have to be screened as well?""",
late=[("I'm going to be away June to August.", "I'm going to be away for 8 months.")],
intent="I'm going to be away June to August. can I charge my friend more than my rent?")

sc("rental_housing",
"""U: I'm thinking of adopting a cat. My Harbourline building is pet-friendly.
A: Yes, Harbourline allows up to 2 pets per unit. There's a $300 one-time pet deposit and $25 monthly pet rent per pet.
U: what would it cost me in the first year?""",
"""U: I'd like to adopt a cat. My Harbourline building allows pets.
A: It does: up to 2 pets per unit, with a $300 one-time deposit and $25 a month in pet rent for each pet.
U: How much would it run me in year one?""",
early=[("a cat", "two cats")],
late=[("what would it cost me in the first year?", "what would it cost me in the first 6 months?")],
flip="""U: My Harbourline building offers reserved parking spots.
A: Reserved spots are $50 a month plus a one-time $100 gate remote fee.""",
intent="is the pet deposit refundable when I move out?")

sc("rental_housing",
"""U: I'm touring a Harbourline studio for $1,450 a month. Are utilities included?
A: At that building, water, sewer and trash are included. Electricity and internet are billed separately.
U: my electric bill is usually about $60. so what would I pay per month in total?""",
"""U: Touring a $1,450/month Harbourline studio. does rent include utilities?
A: Water, sewer and trash are covered in that building; you'd pay electricity and internet yourself.
U: I usually spend around $60 on electricity. What would my monthly total be?""",
early=[("$1,450", "$1,600")],
late=[("$60", "$110")],
flip="""U: I'm also looking at a Brookfield Lofts studio at $1,450 with all utilities included.
A: Right. Brookfield includes electricity, water and internet, but charges a $40 monthly amenity fee.""",
intent="my electric bill is usually about $60. can I set it up in my name before move-in?")

sc("rental_housing",
"""U: My Harbourline rent is due on the 1st with a 5-day grace period.
A: Correct. After the grace period, Harbourline charges a flat $75 late fee.
U: if I pay on the 9th, how much is the fee?""",
"""U: Harbourline rent is due the 1st and there's a 5-day grace period, right?
A: That's right. Once the grace period passes, there's a flat $75 late fee.
U: What's the fee if I pay on the 9th?""",
early=[("the 1st", "the 15th")],
late=[("on the 9th", "on the 4th")],
flip="""U: My Greyridge electric bill was due on the 1st.
A: Greyridge adds a 1.5% late payment charge to balances unpaid after the due date.""",
intent="if I pay on the 9th, will it be reported to the credit bureaus?")

sc("rental_housing",
"""U: My roommate and I are both on a Harbourline lease. She's moving out in April.
A: Both of you are jointly responsible for the full rent until the lease ends or she's formally released.
U: can I find a replacement roommate?""",
"""U: My roommate is leaving in April; we're both on our Harbourline lease.
A: You're jointly liable for the whole rent until the lease ends or Harbourline formally releases her.
U: Am I allowed to bring in a replacement roommate?""",
early=[("are both on a Harbourline lease", "live in a Harbourline apartment, but only my name is on the lease"),
       ("Both of you are jointly responsible for the full rent until the lease ends or she's formally released.",
        "Since you're the only leaseholder, you're responsible for the full rent either way.")],
intent="can she get her share of the deposit back now?")

# ---------------------------------------------------------------- healthcare_admin
sc("healthcare_admin",
"""U: I have a Bluepine HMO plan. I want to see a dermatologist.
A: On Bluepine HMO plans, you need a referral from your primary care provider before seeing a specialist.
U: how do I get one?""",
"""U: I'd like to see a dermatologist. I'm on Bluepine's HMO.
A: Bluepine HMO requires a referral from your primary care provider before any specialist visit.
U: What's the process to get a referral?""",
early=[("Bluepine HMO plan", "Bluepine PPO plan"),
       ("On Bluepine HMO plans, you need a referral from your primary care provider before seeing a specialist.",
        "Bluepine PPO plans don't require referrals to see specialists.")],
late=[("how do I get one?", "how do I get one? my primary care doctor is on leave for 3 months")],
flip="""U: I need a note for my employer saying I was sick last week.
A: Your Meadowcrest provider can write a work excuse note if you were seen during that time.""",
intent="how long is the referral valid for?")

sc("healthcare_admin",
"""U: My Bluepine plan has a $1,500 deductible and I've met $400 of it this year.
A: Thanks. After the deductible, you pay 20% coinsurance up to your out-of-pocket max.
U: I need an MRI that costs $1,800. what will I owe?""",
"""U: I've paid $400 toward my $1,500 Bluepine deductible so far this year.
A: Got it. Once the deductible is met, you pay 20% coinsurance until you hit the out-of-pocket maximum.
U: What would I owe for an MRI priced at $1,800?""",
early=[("$400", "$1,500")],
late=[("$1,800", "$900")],
flip="""U: I'm paying cash for an MRI at Meadowcrest Imaging, and they offer 40% off for self-pay.
A: Yes, self-pay patients get 40% off if they pay at the time of service.""",
intent="I need an MRI that costs $1,800. do I need prior authorization?")

sc("healthcare_admin",
"""U: I have a Meadowcrest physical therapy appointment tomorrow at 9am.
A: I see it, tomorrow at 9:00 with Dr. Lin.
U: I can't make it. will I be charged if I cancel now?""",
"""U: I'm booked for physical therapy at Meadowcrest tomorrow at 9am.
A: Yes, I have you down for tomorrow at 9:00 with Dr. Lin.
U: I won't be able to come. Is there a charge if I cancel at this point?""",
early=[("tomorrow at 9am", "next Thursday at 9am"), ("tomorrow at 9:00", "next Thursday at 9:00")],
late=[("I can't make it.", "I've got a fever of 102.")],
flip="""U: I booked a 9am Fitlane spin class tomorrow.
A: You're booked for tomorrow's 9am Ride 45 class.""",
intent="I can't make it. can I move it to the afternoon?")

sc("healthcare_admin",
"""U: I need copies of my medical records from Meadowcrest for a new doctor.
A: You can request them through the Meadowcrest patient portal under Records > Request Copies, or send a signed release form.
U: is there a fee?""",
"""U: My new doctor needs my Meadowcrest medical records. how do I get copies?
A: Either request them in the patient portal under Records > Request Copies or submit a signed release form.
U: Do they charge for it?""",
early=[("for a new doctor", "for a lawsuit my lawyer is handling")],
late=[("is there a fee?", "is there a fee for paper copies mailed to me?")],
flip="""U: I'd like my Meadowcrest doctor to fill out my FMLA forms.
A: Forms are completed within 7 to 10 business days after you drop them off.""",
intent="how long does it take to get them?")

sc("healthcare_admin",
"""U: My doctor prescribed Lorvexa. I'm on the Bluepine Silver plan.
A: On Silver, Lorvexa is a Tier 3 drug, which means a $60 copay for a 30-day supply.
U: what about a 90-day supply by mail?""",
"""U: I'm on Bluepine Silver and my doctor has prescribed Lorvexa.
A: Lorvexa is Tier 3 on the Silver plan, a $60 copay per 30-day supply.
U: And for a 90-day mail-order supply?""",
early=[("Bluepine Silver plan", "Bluepine Gold plan"),
       ("On Silver, Lorvexa is a Tier 3 drug, which means a $60 copay for a 30-day supply.",
        "On Gold, Lorvexa is a Tier 2 drug with a $30 copay for a 30-day supply.")],
late=[("by mail", "at a retail pharmacy")],
flip="""U: My cat's vet prescribed Felimax, and I fill it at the Petwell pharmacy.
A: Petwell charges $28 for a 30-day supply of Felimax.""",
intent="is there a generic version?")

sc("healthcare_admin",
"""U: I started a new job and my Bluepine coverage begins on the 1st. I have an appointment on the 28th.
A: Coverage starts the 1st, so a visit on the 28th would fall before your plan is active.
U: can I still use my old insurance for it?""",
"""U: New job, Bluepine coverage kicks in on the 1st, but I've got an appointment on the 28th.
A: Since coverage begins on the 1st, the appointment on the 28th would be before your plan is active.
U: Could I use my previous insurance for that one?""",
early=[("I have an appointment on the 28th.", "I have an appointment on the 3rd."),
       ("Coverage starts the 1st, so a visit on the 28th would fall before your plan is active.",
        "Coverage starts the 1st, so a visit on the 3rd would fall under your Bluepine plan.")],
late=[("can I still use my old insurance for it?", "can I still use my old insurance for it? my COBRA notice says it ended on the 15th")],
intent="can I move the appointment to after the 1st without a fee?")

sc("healthcare_admin",
"""U: Bluepine denied my claim for an allergy test. The EOB says "not medically necessary."
A: You can appeal. Ask your doctor for a letter of medical necessity and submit it with the appeal form.
U: how long do I have to appeal?""",
"""U: My allergy test claim was denied by Bluepine. The EOB reason is "not medically necessary."
A: You're able to appeal. Get a letter of medical necessity from your doctor and send it in with the appeal form.
U: What's the deadline for filing an appeal?""",
flip="""U: I got a parking ticket outside Meadowcrest hospital even though I paid at the machine.
A: You can contest it online with the city if you believe it was issued in error.""",
intent="how long does Bluepine take to decide an appeal?")

sc("healthcare_admin",
"""U: Does Bluepine cover telehealth visits? I'm on the Bronze plan.
A: Yes. On Bronze, virtual urgent care visits through Bluepine Virtual are $0, and visits with your own doctor are billed like office visits.
U: what would I pay for a video visit with my regular doctor?""",
"""U: I'm on Bluepine Bronze. are telehealth visits covered?
A: They are: Bluepine Virtual urgent care visits cost $0 on Bronze, and video visits with your own doctor are billed the same as in-person visits.
U: How much would a video appointment with my usual doctor cost me?""",
early=[("Bronze", "Gold")],
late=[("with my regular doctor", "with Bluepine Virtual urgent care")],
flip="""U: I'm uninsured right now, between jobs.
A: Meadowcrest offers self-pay video visits at a flat $79.""",
intent="what would I need to set up a video visit with my regular doctor?")

sc("healthcare_admin",
"""U: Is the flu shot covered under my Bluepine plan?
A: Yes, preventive vaccines including the flu shot are covered at 100% when given by an in-network provider or pharmacy.
U: I'd get it at Corner Pharmacy. is that in network?""",
"""U: Does my Bluepine plan pay for a flu shot?
A: It does. Preventive vaccines like the flu shot are 100% covered at in-network providers and pharmacies.
U: Is Corner Pharmacy in network? That's where I'd go.""",
late=[("Corner Pharmacy", "Medway Pharmacy")],
intent="I'd get it at Corner Pharmacy. do I need an appointment?")

# ---------------------------------------------------------------- cooking
sc("cooking",
"""U: I'm making a banana bread recipe that uses 2 cups of flour and 1 teaspoon of baking soda for one loaf.
A: Sounds good! That's a standard ratio for a 9x5-inch loaf.
U: how much baking soda if I make 3 loaves?""",
"""U: My banana bread recipe calls for 2 cups flour and 1 teaspoon baking soda per loaf.
A: Nice, that's a pretty typical ratio for a 9x5 loaf pan.
U: For 3 loaves, how much baking soda would I need?""",
early=[("1 teaspoon", "1 1/2 teaspoons")],
late=[("3 loaves", "2 loaves")],
flip="""U: My sourdough recipe makes one loaf with 500g flour and 10g salt.
A: That's a 2% salt ratio, which is pretty standard for sourdough.""",
intent="how much flour if I make 3 loaves?")

sc("cooking",
"""U: I'm baking chocolate chip cookies and I'm out of brown sugar.
A: You can make brown sugar by mixing 1 cup of white sugar with 1 tablespoon of molasses.
U: I don't have molasses either. what else can I use?""",
"""U: Out of brown sugar and I'm halfway through making chocolate chip cookies.
A: Mix 1 tablespoon of molasses into 1 cup of white sugar and you've got brown sugar.
U: No molasses here either. What can I substitute?""",
early=[("chocolate chip cookies", "a pecan pie")],
late=[("I don't have molasses either.", "I only have blackstrap molasses.")],
flip="""U: I'm making gingerbread and the recipe needs molasses.
A: Molasses gives gingerbread its dark color and deep flavor; you'll want about 1/2 cup.""",
intent="I don't have molasses either. will the cookies turn out very different with just white sugar?")

sc("cooking",
"""U: I'm roasting a whole chicken at 425F.
A: At 425F, plan on about 15 minutes per pound, until the thickest part of the thigh reaches 165F.
U: it's 5 pounds. how long?""",
"""U: Roasting a whole chicken at 425F tonight.
A: Figure roughly 15 minutes per pound at 425F, and pull it when the thickest part of the thigh hits 165F.
U: How long for a bird that's 5 pounds?""",
early=[("at 425F.", "at 350F."), ("At 425F, plan on about 15 minutes per pound", "At 350F, plan on about 20 minutes per pound")],
late=[("5 pounds", "3 1/2 pounds")],
flip="""U: I'm roasting a pork shoulder at 300F for pulled pork.
A: Low and slow: about 1 hour to 1 hour 15 minutes per pound, until it reaches 200F inside.""",
intent="it's 5 pounds. how long should it rest after?")

sc("cooking",
"""U: I'm cooking basmati rice on the stove.
A: For basmati, use about 1 1/2 cups of water per cup of rinsed rice, and simmer covered for 15 minutes.
U: how much water for 3 cups of rice?""",
"""U: Making basmati on the stovetop.
A: Basmati needs roughly 1 1/2 cups of water for every cup of rinsed rice; simmer it covered for 15 minutes.
U: For 3 cups of rice, how much water?""",
early=[("basmati rice", "brown rice"),
       ("For basmati, use about 1 1/2 cups of water per cup of rinsed rice, and simmer covered for 15 minutes.",
        "For brown rice, use about 2 1/4 cups of water per cup of rice and simmer covered for 40 to 45 minutes.")],
late=[("3 cups", "2 cups")],
flip="""U: I'm making risotto with arborio rice.
A: Risotto uses about 3 to 4 cups of hot stock per cup of arborio, added a ladle at a time.""",
intent="how long should I simmer 3 cups of rice?")

sc("cooking",
"""U: I made a pot of chili on Sunday and put it in the fridge that night.
A: Cooked chili keeps 3 to 4 days in the fridge.
U: today's Wednesday. is it still ok to eat?""",
"""U: Sunday I cooked a big pot of chili and refrigerated it that evening.
A: Cooked chili is good for 3 to 4 days in the refrigerator.
U: It's Wednesday now. Can I still eat it?""",
early=[("put it in the fridge that night", "left it on the stove overnight before putting it in the fridge")],
late=[("Wednesday", "Saturday")],
flip="""U: I bought fresh fish on Sunday and put it in the fridge that night.
A: Raw fish should be cooked or frozen within 1 to 2 days.""",
intent="today's Wednesday. can I freeze it now?")

sc("cooking",
"""U: My recipe says bake at 180C for 25 minutes but my oven is in Fahrenheit.
A: 180C is about 350F.
U: it's a convection oven though. what should I set it to?""",
"""U: Recipe wants 180C for 25 minutes, but my oven only shows Fahrenheit.
A: 180C works out to roughly 350F.
U: Mine is a convection oven, though. What temperature should I use?""",
early=[("180C", "220C"), ("350F", "425F")],
late=[("it's a convection oven though.", "it's a regular oven, not convection.")],
flip="""U: I'm using an air fryer for frozen fries, and the bag says 425F in a regular oven.
A: Air fryers usually need about 25F less and a shorter time.""",
intent="it's a convection oven though. should I change the baking time?")

sc("cooking",
"""U: My bread dough has been rising for an hour in a cold kitchen, about 62F.
A: Cool temperatures slow yeast down a lot, so it may need 2 to 3 hours to double.
U: can I speed it up?""",
"""U: Dough's been proofing an hour but my kitchen is cold, maybe 62F.
A: Yeast works slowly when it's cool, so doubling could take 2 to 3 hours.
U: Is there a way to make it rise faster?""",
early=[("in a cold kitchen, about 62F", "in a warm kitchen, about 80F"),
       ("Cool temperatures slow yeast down a lot, so it may need 2 to 3 hours to double.",
        "At that temperature it should double in about 1 to 1 1/2 hours.")],
late=[("can I speed it up?", "can I speed it up? it's a sourdough with no commercial yeast")],
flip="""U: My slow cooker pot roast is taking forever.
A: On low, a 3-pound roast usually needs about 8 hours; on high, about 5.""",
intent="can I put it in the fridge overnight instead?")

sc("cooking",
"""U: My cake recipe is for two 9-inch round pans. I want to use a 9x13 pan instead.
A: That works, since the batter volume is about the same. Bake at the same temperature.
U: how long should I bake it?""",
"""U: Recipe says two 9-inch rounds, but I'd rather bake it in a 9x13.
A: No problem. The volume is roughly the same, and the temperature stays the same.
U: What baking time should I use?""",
early=[("9x13", "12-cup Bundt")],
late=[("how long should I bake it?", "how long should I bake it if I only make half the batter?")],
flip="""U: I'm making brownies in a 9x13 glass dish instead of the 8x8 metal pan the recipe calls for.
A: Glass holds more heat, so lower the oven by 25F.""",
intent="how do I know when it's done?")

sc("cooking",
"""U: I'm making strawberry jam with 4 cups of crushed berries.
A: A classic cooked jam uses about 7 cups of sugar per 4 cups of crushed berries with regular pectin.
U: can I cut the sugar in half?""",
"""U: Making strawberry jam. I've got 4 cups of crushed strawberries.
A: Traditional cooked jam with regular pectin needs roughly 7 cups of sugar for 4 cups of crushed berries.
U: Would it work with half the sugar?""",
early=[("I'm making strawberry jam", "I'm making strawberry freezer jam with low-sugar pectin"),
       ("A classic cooked jam uses about 7 cups of sugar per 4 cups of crushed berries with regular pectin.",
        "With low-sugar pectin you can use anywhere from 0 to 3 cups of sugar for 4 cups of berries.")],
flip="""U: I'm baking a strawberry cake and the frosting uses 4 cups of powdered sugar.
A: That makes a thick, very sweet buttercream.""",
intent="can I double the batch?")

# ---------------------------------------------------------------- programming
sc("programming",
"""U: In Python, I have a list of user IDs with duplicates and I need to keep the original order.
A: You can use dict.fromkeys: list(dict.fromkeys(ids)) removes duplicates while preserving order.
U: what if I don't care about the order?""",
"""U: Python question: my list of user IDs has duplicates, and the original order has to stay.
A: list(dict.fromkeys(ids)) will drop duplicates and keep the order.
U: And if order doesn't matter?""",
early=[("In Python, I have a list", "In JavaScript, I have an array"),
       ("You can use dict.fromkeys: list(dict.fromkeys(ids)) removes duplicates while preserving order.",
        "You can use a Set: [...new Set(ids)] removes duplicates and keeps insertion order.")],
late=[("what if I don't care about the order?", "what if the IDs are dicts rather than strings?")],
flip="""U: In SQL, I'm selecting user IDs from an orders table and getting duplicates, but I need them sorted by first order date.
A: Use GROUP BY user_id with ORDER BY MIN(order_date).""",
intent="what if I want to count how many times each one appears?")

sc("programming",
"""U: I committed to main by mistake. I haven't pushed yet.
A: You can move the commit to a new branch: git branch fix-branch, then git reset --hard HEAD~1 on main.
U: what if I want to keep the changes but just undo the commit?""",
"""U: Accidentally committed to main, haven't pushed it anywhere.
A: Make a branch at that commit (git branch fix-branch) and then run git reset --hard HEAD~1 on main.
U: Is there a way to undo the commit but keep my changes?""",
early=[("I haven't pushed yet.", "I already pushed it to origin."),
       ("You can move the commit to a new branch: git branch fix-branch, then git reset --hard HEAD~1 on main.",
        "Since it's already pushed, the safest option is git revert so you don't rewrite shared history.")],
late=[("but just undo the commit?", "but just undo the last 3 commits?")],
intent="what if I want to undo the commit and throw away the changes?")

sc("programming",
"""U: In Node, I'm calling an API for each item in an array with forEach and await, but it doesn't wait.
A: forEach ignores returned promises. Use a for...of loop with await instead to run them one at a time.
U: what if I want them to run in parallel?""",
"""U: Node question: I'm using forEach with await to hit an API for every array item, and it isn't waiting.
A: forEach doesn't wait on promises. Switch to for...of with await so they run sequentially.
U: And if I'd like them to run in parallel?""",
late=[("run in parallel", "run in parallel but no more than 5 at a time")],
flip="""U: My Jest test files run one at a time and the suite is slow.
A: Jest runs test files in parallel workers by default, unless something passes --runInBand.""",
intent="what if I want to stop at the first error?")

sc("programming",
"""U: My Postgres query filtering orders by customer_id is slow. The table has 20 million rows.
A: An index on customer_id should help a lot: CREATE INDEX idx_orders_customer ON orders(customer_id);
U: will creating it lock the table?""",
"""U: Filtering orders by customer_id is slow in Postgres. 20 million rows in the table.
A: Add an index on customer_id: CREATE INDEX idx_orders_customer ON orders(customer_id);
U: Does building that index lock the table?""",
early=[("Postgres", "MySQL 8")],
late=[("will creating it lock the table?", "will creating it lock the table if I add CONCURRENTLY?")],
flip="""U: I need to add a NOT NULL column with a default to a 20-million-row Postgres table.
A: You can run ALTER TABLE orders ADD COLUMN status text NOT NULL DEFAULT 'new';""",
intent="how much disk space will creating it take?")

sc("programming",
"""U: In Python I have a naive datetime from our database that's actually UTC.
A: You can attach UTC with dt.replace(tzinfo=timezone.utc).
U: how do I convert it to New York time?""",
"""U: Python: the database gives me naive datetimes, but they're really UTC.
A: Make it aware with dt.replace(tzinfo=timezone.utc).
U: Then how do I get it in New York time?""",
early=[("that's actually UTC", "that's actually Berlin local time"),
       ("You can attach UTC with dt.replace(tzinfo=timezone.utc).", "You can attach the zone with dt.replace(tzinfo=ZoneInfo('Europe/Berlin')).")],
late=[("New York time", "a Unix timestamp")],
flip="""U: In JavaScript I have a Date object created from an ISO string ending in Z.
A: That Date represents a UTC instant; JavaScript stores it internally as milliseconds since the epoch.""",
intent="how do I format it as an ISO string?")

sc("programming",
"""U: My React useEffect runs twice on mount in development. I'm on React 18 with StrictMode.
A: That's expected: StrictMode mounts, unmounts and remounts components in development to surface side-effect bugs.
U: will it also run twice in production?""",
"""U: useEffect is firing twice on mount in dev. React 18, StrictMode on.
A: That's by design. In development, StrictMode mounts, unmounts and remounts components to expose side-effect problems.
U: Does that double run happen in production too?""",
early=[("I'm on React 18 with StrictMode.", "I'm on React 17, no StrictMode."),
       ("That's expected: StrictMode mounts, unmounts and remounts components in development to surface side-effect bugs.",
        "Without StrictMode that usually means the component is being mounted twice, for example because a parent changes its key.")],
flip="""U: My Express middleware logs every request twice.
A: That often happens when the middleware is registered both globally and on a router.""",
intent="how do I stop it running twice in development?")

sc("programming",
"""U: My Docker image for a Go service is 1.1GB. It's based on golang:1.22.
A: Use a multi-stage build: compile in golang:1.22, then copy the binary into a small base like distroless or scratch.
U: roughly how small could it get?""",
"""U: Go service, Docker image is 1.1GB, base image golang:1.22.
A: Go multi-stage: build in golang:1.22 and copy only the compiled binary into distroless or scratch.
U: How small could I realistically get it?""",
early=[("a Go service", "a Python Flask service"), ("It's based on golang:1.22.", "It's based on python:3.12."),
       ("Use a multi-stage build: compile in golang:1.22, then copy the binary into a small base like distroless or scratch.",
        "Switch to python:3.12-slim and install only runtime dependencies; a multi-stage build helps if you compile wheels.")],
flip="""U: Our Postgres database dump is 1.1GB as plain SQL.
A: You can compress it with pg_dump -Fc, which writes the custom format with compression.""",
intent="roughly how much faster would it build?")

sc("programming",
"""U: I'm using Python requests to call a slow API. Sometimes it hangs forever.
A: requests has no default timeout. Pass one explicitly, e.g. requests.get(url, timeout=10).
U: what exception do I catch when it times out?""",
"""U: Calls to a slow API using Python requests sometimes hang indefinitely.
A: There's no default timeout in requests, so set one, like requests.get(url, timeout=10).
U: Which exception should I catch for a timeout?""",
early=[("Python requests", "Python httpx"),
       ("requests has no default timeout. Pass one explicitly, e.g. requests.get(url, timeout=10).",
        "httpx has a default timeout of 5 seconds, which you can change with httpx.get(url, timeout=10).")],
late=[("when it times out?", "when the server refuses the connection?")],
flip="""U: I'm using asyncio.wait_for around a coroutine that reads from a socket.
A: wait_for cancels the coroutine if it runs longer than the timeout you pass.""",
intent="how do I retry automatically when it times out?")

sc("programming",
"""U: I want to center a div horizontally and vertically inside its parent.
A: The simplest way is flexbox on the parent: display: flex; justify-content: center; align-items: center;
U: what if I need it to work in IE11?""",
"""U: How do I center a div both horizontally and vertically in its container?
A: Easiest is flexbox on the parent: display: flex; justify-content: center; align-items: center;
U: And if it has to work in IE11?""",
late=[("in IE11", "in an HTML email for Outlook")],
flip="""U: I need our React 18 app to run on some old kiosk machines.
A: React 18 supports modern browsers; which browser do the kiosks run?""",
intent="what if I only want it centered horizontally?")
