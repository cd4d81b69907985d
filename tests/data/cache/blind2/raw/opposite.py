# Hand-written opposite_wording look-alikes (same_answer = false): one antonym swapped
# (cheapest/most expensive, increase/decrease, join/leave, enable/disable, add/remove...).
CATEGORY = "opposite_wording"
DATA = r'''
@retail_banking
How do I increase my daily transfer limit? ~~ How do I decrease my daily transfer limit?
Which Quillfield savings account has the highest interest rate? ~~ Which Quillfield savings account has the lowest interest rate?
How do I add a joint holder to my account? ~~ How do I remove a joint holder from my account?
How do I turn on paperless statements? ~~ How do I turn off paperless statements?
How do I lock my online banking? ~~ How do I unlock my online banking?
How do I open a second current account? ~~ How do I close a second current account?
Why did my interest rate go up on Easy Saver? ~~ Why did my interest rate go down on Easy Saver?
How do I opt in to overdraft alerts? ~~ How do I opt out of overdraft alerts?

@cards_payments
How do I raise my contactless limit? ~~ How do I lower my contactless limit?
How do I enable online payments on my card? ~~ How do I disable online payments on my card?
Which Ambry card has the lowest annual fee? ~~ Which Ambry card has the highest annual fee?
How do I add an authorised user to my card? ~~ How do I remove an authorised user from my card?
How do I block gambling transactions on my card? ~~ How do I unblock gambling transactions on my card?
Why did my credit limit go up? ~~ Why did my credit limit go down?
How do I switch on spending notifications? ~~ How do I switch off spending notifications?
What's the minimum payment on my card? ~~ What's the maximum payment I can make on my card?

@insurance_claims
How do I increase my voluntary excess? ~~ How do I reduce my voluntary excess?
Which Mirevale policy gives the most cover for gadgets? ~~ Which Mirevale policy gives the least cover for gadgets?
How do I add legal cover to my policy? ~~ How do I remove legal cover from my policy?
Why did my premium go up at renewal? ~~ Why did my premium go down at renewal?
How do I start auto-renewal on my policy? ~~ How do I stop auto-renewal on my policy?
What can speed up my claim? ~~ What can slow down my claim?
How do I accept the settlement offer? ~~ How do I reject the settlement offer?
Which factors make car insurance cheaper? ~~ Which factors make car insurance more expensive?

@telecom_mobile
How do I upgrade my Orvane plan? ~~ How do I downgrade my Orvane plan?
How do I turn on data roaming? ~~ How do I turn off data roaming?
What's the cheapest Orvane SIM-only plan? ~~ What's the most expensive Orvane SIM-only plan?
How do I add a line to my account? ~~ How do I remove a line from my account?
How do I activate voicemail? ~~ How do I deactivate voicemail?
How do I join an Orvane family plan? ~~ How do I leave an Orvane family plan?
How do I enable call forwarding? ~~ How do I disable call forwarding?
Why is my signal strongest upstairs? ~~ Why is my signal weakest upstairs?

@internet_service
How do I speed up my wifi? ~~ How do I slow down my kids' wifi at night?
How do I enable WPS on the Zephra hub? ~~ How do I disable WPS on the Zephra hub?
Which Zephra plan has the fastest upload? ~~ Which Zephra plan has the slowest upload?
How do I open a port on my router? ~~ How do I close a port on my router?
How do I allow a device on my network? ~~ How do I block a device on my network?
How do I increase my wifi range? ~~ How do I reduce my wifi range?
How do I turn on the guest network? ~~ How do I turn off the guest network?
Why did my bill increase this month? ~~ Why did my bill decrease this month?

@utilities
How do I increase my monthly direct debit? ~~ How do I decrease my monthly direct debit?
What's the cheapest time of day to use electricity? ~~ What's the most expensive time of day to use electricity?
How do I turn up my boiler pressure? ~~ How do I turn down my boiler pressure?
How do I join the priority services register? ~~ How do I leave the priority services register?
Why is my water pressure high? ~~ Why is my water pressure low?
How do I opt in to smart meter half-hourly readings? ~~ How do I opt out of smart meter half-hourly readings?
Which appliances use the most electricity? ~~ Which appliances use the least electricity?
Why is my energy account in credit? ~~ Why is my energy account in debit?

@tax
How do I increase my tax code allowance? ~~ How do I reduce my tax code allowance?
Why did I overpay tax this year? ~~ Why did I underpay tax this year?
What's the highest rate of income tax? ~~ What's the lowest rate of income tax?
How do I register for VAT? ~~ How do I deregister for VAT?
Which expenses increase my tax bill? ~~ Which expenses reduce my tax bill?
How do I opt in to the flat rate VAT scheme? ~~ How do I opt out of the flat rate VAT scheme?
Why is my tax refund larger than expected? ~~ Why is my tax refund smaller than expected?
How do I add a dependent to my return? ~~ How do I remove a dependent from my return?

@travel_bookings
What's the cheapest hotel near the airport? ~~ What's the most expensive hotel near the airport?
How do I add a night to my booking? ~~ How do I remove a night from my booking?
Which seats have the most legroom? ~~ Which seats have the least legroom?
How do I upgrade my room? ~~ How do I downgrade my room?
What's the shortest flight to Lisbon? ~~ What's the longest flight to Lisbon?
How do I accept the rebooking offer from Voyaro? ~~ How do I decline the rebooking offer from Voyaro?
Which months are busiest in Crete? ~~ Which months are quietest in Crete?
How do I turn on price alerts for this route? ~~ How do I turn off price alerts for this route?

@airline_baggage
What's the largest bag I can check in? ~~ What's the smallest bag I can check in?
How do I add a bag to my booking? ~~ How do I remove a bag from my booking?
Which Brisa fare has the most baggage allowance? ~~ Which Brisa fare has the least baggage allowance?
How do I upgrade to a fare with more baggage? ~~ How do I downgrade to a fare with less baggage?
Which Brisa routes allow a heavier cabin bag? ~~ Which Brisa routes require a lighter cabin bag?
How do I increase my baggage allowance? ~~ How do I reduce my baggage allowance to get a refund?
Where do I drop off oversized baggage? ~~ Where do I pick up oversized baggage?
Which airports have the fastest baggage reclaim? ~~ Which airports have the slowest baggage reclaim?

@ecommerce_orders
How do I add an item to my order? ~~ How do I remove an item from my order?
How do I find the cheapest laptops on Cartwell? ~~ How do I find the most expensive laptops on Cartwell?
How do I subscribe to Cartwell emails? ~~ How do I unsubscribe from Cartwell emails?
Why did the price go up after I added it to my basket? ~~ Why did the price go down after I added it to my basket?
How do I join Cartwell Plus? ~~ How do I leave Cartwell Plus?
How do I accept a partial refund? ~~ How do I reject a partial refund?
Which delivery option is fastest? ~~ Which delivery option is slowest but free?
How do I enable one-click ordering? ~~ How do I disable one-click ordering?

@subscriptions_streaming
How do I upgrade to Fennix Premium? ~~ How do I downgrade from Fennix Premium?
How do I turn on autoplay? ~~ How do I turn off autoplay?
Which Fennix plan is cheapest? ~~ Which Fennix plan is most expensive?
How do I add someone to my Tandlo family plan? ~~ How do I remove someone from my Tandlo family plan?
How do I increase the video quality? ~~ How do I decrease the video quality to save data?
How do I join a watch party? ~~ How do I leave a watch party?
How do I follow an artist on Tandlo? ~~ How do I unfollow an artist on Tandlo?
What are the most watched shows this week? ~~ What are the least watched shows this week?

@hr_payroll
How do I increase my pension contributions? ~~ How do I decrease my pension contributions?
How do I opt in to the company pension? ~~ How do I opt out of the company pension?
How do I join the cycle to work scheme? ~~ How do I leave the cycle to work scheme?
How do I add a dependant to my health benefit? ~~ How do I remove a dependant from my health benefit?
How do I approve a leave request? ~~ How do I reject a leave request?
Why did my take-home pay go up? ~~ Why did my take-home pay go down?
How do I accept a job offer in the system? ~~ How do I decline a job offer in the system?
How do I start salary sacrifice? ~~ How do I stop salary sacrifice?

@it_helpdesk
How do I enable Bluetooth on my work laptop? ~~ How do I disable Bluetooth on my work laptop?
How do I grant access to the shared folder? ~~ How do I revoke access to the shared folder?
How do I increase the font size in Outlook? ~~ How do I decrease the font size in Outlook?
How do I join a distribution list? ~~ How do I leave a distribution list?
How do I lock my screen? ~~ How do I unlock my screen?
How do I turn on automatic updates? ~~ How do I turn off automatic updates?
How do I add a user to the team channel? ~~ How do I remove a user from the team channel?
How do I mount the network drive? ~~ How do I unmount the network drive?

@rental_housing
Can my landlord increase my rent? ~~ Can I ask my landlord to decrease my rent?
How do I add someone to my tenancy? ~~ How do I remove someone from my tenancy?
How do I start the deposit dispute process? ~~ How do I withdraw from the deposit dispute process?
What's the cheapest area to rent in Bristol? ~~ What's the most expensive area to rent in Bristol?
How do I accept the landlord's offer to renew? ~~ How do I refuse the landlord's offer to renew?
Can I ask my landlord to lengthen my tenancy? ~~ Can I ask my landlord to shorten my tenancy?
How do I join the tenants' association? ~~ How do I leave the tenants' association?
Why is my flat so cold? ~~ Why is my flat so hot?

@healthcare_admin
How do I register with the surgery? ~~ How do I deregister from the surgery?
How do I increase my Halcyon cover? ~~ How do I reduce my Halcyon cover?
How do I opt in to sharing my medical records? ~~ How do I opt out of sharing my medical records?
How do I add my partner to my health plan? ~~ How do I remove my partner from my health plan?
How do I confirm my appointment? ~~ How do I cancel my appointment?
Which Halcyon plan has the lowest excess? ~~ Which Halcyon plan has the highest excess?
How do I start a repeat prescription? ~~ How do I stop a repeat prescription?
Why did my premium go up this year? ~~ Why did my premium go down this year?

@education_admin
How do I add a module? ~~ How do I drop a module?
How do I join the student union? ~~ How do I leave the student union?
How do I accept my offer at Stoneleigh? ~~ How do I decline my offer at Stoneleigh?
What's the highest mark for a 2:2? ~~ What's the lowest mark for a 2:2?
How do I opt in to graduation photos? ~~ How do I opt out of graduation photos?
Which halls are cheapest? ~~ Which halls are most expensive?
How do I increase my student loan? ~~ How do I reduce my student loan?
How do I enrol on the placement year? ~~ How do I withdraw from the placement year?

@cooking
How do I make my curry spicier? ~~ How do I make my curry milder?
How do I thicken a soup? ~~ How do I thin a soup?
How do I make my bread crust softer? ~~ How do I make my bread crust crunchier?
Which potatoes are best for mashing? ~~ Which potatoes are worst for mashing?
How do I make my cookies thicker? ~~ How do I make my cookies thinner?
How do I make a sauce sweeter? ~~ How do I make a sauce less sweet?
How do I increase the rise of my cake? ~~ How do I reduce the dome on my cake?
How do I make rice stickier? ~~ How do I make rice less sticky?

@general_knowledge
What's the largest country in Africa? ~~ What's the smallest country in Africa?
What's the deepest lake in the world? ~~ What's the shallowest lake in the world?
Which is the hottest planet? ~~ Which is the coldest planet?
What's the fastest land animal? ~~ What's the slowest land animal?
Which country has the highest population? ~~ Which country has the lowest population?
What's the oldest university in Europe? ~~ What's the newest university in Europe?
Which element is the lightest? ~~ Which element is the heaviest?
Which country joined the EU most recently? ~~ Which country left the EU most recently?

@programming
How do I increase the stack size in Java? ~~ How do I decrease the stack size in Java?
How do I add a column to a table in SQL? ~~ How do I remove a column from a table in SQL?
How do I enable CORS in Express? ~~ How do I disable CORS in Express?
How do I sort a list in ascending order in Python? ~~ How do I sort a list in descending order in Python?
How do I find the maximum value in an array in JavaScript? ~~ How do I find the minimum value in an array in JavaScript?
How do I show hidden files in Linux? ~~ How do I hide files in Linux?
How do I push to a remote branch in git? ~~ How do I pull from a remote branch in git?
How do I encode a string to base64 in Python? ~~ How do I decode a base64 string in Python?
How do I zip a folder in Linux? ~~ How do I unzip a folder in Linux?

@personal_finance
Why did my credit score rise? ~~ Why did my credit score drop?
Which investments are the most risky? ~~ Which investments are the least risky?
Why did the interest on my savings go up? ~~ Why did the interest on my savings go down?
Should I buy bonds when rates are high? ~~ Should I sell bonds when rates are high?
What's the best time to buy shares? ~~ What's the best time to sell shares?
Which debts have the highest interest? ~~ Which debts have the lowest interest?
How do I join my employer's share scheme? ~~ How do I leave my employer's share scheme?
What are the benefits of renting? ~~ What are the drawbacks of renting?
'''
