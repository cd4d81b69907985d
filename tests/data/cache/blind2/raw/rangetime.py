# Hand-written range_or_time look-alikes (same_answer = false): before/after,
# earliest/latest, since/until, above/below, over/under, first/last, start/end.
CATEGORY = "range_or_time"
DATA = r'''
@retail_banking
What happens if I send a transfer before 3pm? ~~ What happens if I send a transfer after 3pm?
What's the earliest I can withdraw from my fixed saver? ~~ What's the latest I can withdraw from my fixed saver without losing interest?
Can I see transactions from before I opened my online banking? ~~ Can I see transactions from after I closed my online banking?
What interest do you pay on balances above 5,000? ~~ What interest do you pay on balances below 5,000?
When does my account switch start? ~~ When does my account switch finish?
What time do branches open on Saturdays? ~~ What time do branches close on Saturdays?
How do I see payments made since Monday? ~~ How do I see payments scheduled until Monday?
Can I cancel a standing order the day before it goes out? ~~ Can I cancel a standing order the day after it goes out?

@cards_payments
Do purchases made before the statement date count towards this month's bill? ~~ Do purchases made after the statement date count towards this month's bill?
What's the fee for cash withdrawals over 200? ~~ What's the fee for cash withdrawals under 200?
When does my 0% balance transfer offer start? ~~ When does my 0% balance transfer offer end?
Can I get a refund on a purchase made before my card was reported stolen? ~~ Can I get a refund on a purchase made after my card was reported stolen?
What's the earliest my payment can be taken each month? ~~ What's the latest my payment can be taken each month?
Are payments below 50 protected by the card? ~~ Are payments above 100 protected by the card?
Will I be charged interest if I pay before the due date? ~~ Will I be charged interest if I pay after the due date?
How do I see transactions from the first week of my card? ~~ How do I see transactions from the last week before I closed my card?

@insurance_claims
Am I covered if the damage happened before my policy started? ~~ Am I covered if the damage happened after my policy ended?
What's the earliest I can renew my car insurance? ~~ What's the latest I can renew my car insurance without a gap?
Are items worth over 1,000 covered automatically? ~~ Are items worth under 1,000 covered automatically?
Can I claim if I reported the theft before calling the police? ~~ Can I claim if I reported the theft after calling the police?
When does cover start on a new car policy? ~~ When does cover end on a cancelled car policy?
Does travel insurance cover illnesses that started before I booked? ~~ Does travel insurance cover illnesses that started after I booked?
What's covered in the first 14 days of a pet policy? ~~ What's covered in the last 14 days of a pet policy before renewal?
Are drivers over 75 covered? ~~ Are drivers under 21 covered?

@telecom_mobile
Will I be charged if I go over my data limit? ~~ Will I be charged if I stay under my data limit?
What happens to my plan before my contract ends? ~~ What happens to my plan after my contract ends?
When does my billing month start? ~~ When does my billing month end?
Can I port my number before my contract ends? ~~ Can I port my number after my contract ends?
What's the earliest I can upgrade my phone? ~~ What's the latest I can upgrade my phone and keep my discount?
Are calls made after 7pm free? ~~ Are calls made before 7pm free?
Is roaming free for trips under 30 days? ~~ Is roaming free for trips over 30 days?
How do I see charges since my last bill? ~~ How do I see charges up to my last bill?

@internet_service
What speeds can I get before the fibre upgrade? ~~ What speeds can I get after the fibre upgrade?
What's the earliest installation slot? ~~ What's the latest installation slot?
Is there a fee if I cancel before the 14-day cooling off period? ~~ Is there a fee if I cancel after the 14-day cooling off period?
Why is my speed below 100 Mbps? ~~ Why is my speed above 100 Mbps when I pay for 100?
When does the outage start? ~~ When does the outage end?
Do I pay the full price after the first 12 months? ~~ Do I pay the full price during the first 12 months?
Can I use the hub before the engineer visit? ~~ Can I use the hub after the engineer visit?
Are speeds slower before midnight? ~~ Are speeds slower after midnight?

@utilities
Is electricity cheaper before 7am? ~~ Is electricity cheaper after 7am?
What happens if I give a reading before my bill date? ~~ What happens if I give a reading after my bill date?
When does the price cap change start? ~~ When does the price cap change end?
Do I pay a standing charge before I move in? ~~ Do I pay a standing charge after I move out?
Are households using over 3,000 kWh a year on the wrong tariff? ~~ Are households using under 3,000 kWh a year on the wrong tariff?
What's the earliest I can switch supplier? ~~ What's the latest I can switch supplier before my fixed deal ends?
Is the water bill for the period since April? ~~ Is the water bill for the period until April?
How long after the power cut should I reset my boiler? ~~ How long before the planned power cut should I turn off my boiler?

@tax
Do I pay tax on income earned before I moved to the UK? ~~ Do I pay tax on income earned after I moved to the UK?
What's the tax rate on income above 50,270? ~~ What's the tax rate on income below 50,270?
When does the tax year start? ~~ When does the tax year end?
Can I claim expenses from before I registered as self-employed? ~~ Can I claim expenses from after I stopped being self-employed?
What's the earliest I can file my tax return? ~~ What's the latest I can file my tax return?
Do I pay capital gains on shares sold before the new rate? ~~ Do I pay capital gains on shares sold after the new rate?
Is my pension taxable before age 55? ~~ Is my pension taxable after age 75?
Do I need to pay tax on savings interest above 1,000? ~~ Do I need to pay tax on savings interest below 1,000?

@travel_bookings
What's the earliest check-in time? ~~ What's the latest check-in time?
Can I cancel for free before 48 hours? ~~ Can I cancel for free within 48 hours?
What's the first flight from Dublin to Paris? ~~ What's the last flight from Dublin to Paris?
Is breakfast served before 7am? ~~ Is breakfast served after 10am?
Do kids under 12 stay free? ~~ Do kids over 12 stay free?
Can I change my booking after check-in? ~~ Can I change my booking before check-in?
When does the hotel pool open? ~~ When does the hotel pool close?
Is there a shuttle to the airport before 5am? ~~ Is there a shuttle from the airport after midnight?

@airline_baggage
When does bag drop open? ~~ When does bag drop close?
Can I add a bag after online check-in? ~~ Can I add a bag before online check-in?
What's the fee for bags over 23kg? ~~ What's the fee for bags under 23kg?
What's the earliest I can check my bag in? ~~ What's the latest I can check my bag in?
Do I need to report missing items before leaving the airport? ~~ Can I report missing items after leaving the airport?
Are cabin bags over 10kg allowed? ~~ Are cabin bags under 10kg allowed?
Is my bag insured until I collect it? ~~ Is my bag insured after I collect it?
Are children under 2 entitled to a bag? ~~ Are children over 2 entitled to a bag?

@ecommerce_orders
Will my order arrive before Christmas? ~~ Will my order arrive after Christmas?
Do I get free delivery above 40? ~~ Do I get free delivery below 40?
Can I cancel before dispatch? ~~ Can I cancel after dispatch?
What's the earliest delivery date? ~~ What's the latest delivery date?
Can I return items bought before the sale? ~~ Can I return items bought during the sale?
When does the Black Friday sale start? ~~ When does the Black Friday sale end?
What's the cut-off for next-day delivery, before 2pm? ~~ What happens if I order after 2pm for next-day delivery?
How do I see orders since January? ~~ How do I see orders from before January?

@subscriptions_streaming
If I cancel before my renewal date, am I charged? ~~ If I cancel after my renewal date, am I charged?
When does my free trial start? ~~ When does my free trial end?
What shows are coming to Fennix next month? ~~ What shows are leaving Fennix next month?
Can I watch new episodes before they air on TV? ~~ Can I watch new episodes after they air on TV?
Can kids under 13 have their own account? ~~ Can kids over 13 have their own account?
Was the price increase applied since my last payment? ~~ Will the price increase apply from my next payment?
When was the first season of Northbound released? ~~ When was the last season of Northbound released?
What's the earliest I can upgrade my plan? ~~ What's the latest I can downgrade my plan before renewal?

@hr_payroll
When does the holiday year start? ~~ When does the holiday year end?
Do I get paid for overtime before 8am? ~~ Do I get paid for overtime after 8pm?
Can I book leave before my probation ends? ~~ Can I book leave after my probation ends?
What's the earliest I can retire on the company pension? ~~ What's the latest I can retire on the company pension?
Do I get sick pay from the first day? ~~ Do I get sick pay from the fourth day?
What happens if I submit my timesheet before the payroll cut-off? ~~ What happens if I submit my timesheet after the payroll cut-off?
Do salaries above 100,000 get a different pension rate? ~~ Do salaries below 100,000 get a different pension rate?
How much leave do I accrue in my first year? ~~ How much leave do I accrue in my final year?

@it_helpdesk
What should I do before a system update? ~~ What should I do after a system update?
When does the maintenance window start? ~~ When does the maintenance window end?
Can I recover emails deleted before last week? ~~ Can I recover emails deleted after last week's backup?
What's the earliest the help desk opens? ~~ What's the latest the help desk is open?
Why are files above 2GB failing to upload? ~~ Why are files below 2GB failing to upload?
Do I need to change my password before it expires? ~~ Do I need to change my password after it expires?
How do I see logins since my account was locked? ~~ How do I see logins before my account was locked?
What happens to my laptop after I leave the company? ~~ What happens to my laptop before I leave the company?

@rental_housing
Can my landlord raise the rent before the end of the fixed term? ~~ Can my landlord raise the rent after the end of the fixed term?
What's the earliest I can move in? ~~ What's the latest I can move out?
Do I pay rent after I give notice? ~~ Do I pay rent before I move in?
Who pays for damage that existed before I moved in? ~~ Who pays for damage that happened after I moved in?
When does the deposit have to be protected, before or after I move in? ~~ When does the deposit have to be returned after I move out?
Is rent above 2,000 a month subject to different rules? ~~ Is rent below 2,000 a month subject to different rules?
Can the landlord visit before 9am? ~~ Can the landlord visit after 9pm?
What happens if I stay after my tenancy ends? ~~ What happens if I leave before my tenancy ends?

@healthcare_admin
What time does the surgery open? ~~ What time does the surgery close?
Can I book an appointment before 8am? ~~ Can I book an appointment after 6pm?
Is the flu jab free for people over 65? ~~ Is the flu jab free for people under 65?
Do I need to fast before my blood test? ~~ Can I eat straight after my blood test?
Does Halcyon cover conditions I had before joining? ~~ Does Halcyon cover conditions I get after joining?
What's the earliest I can order my repeat prescription? ~~ What's the latest I can order my repeat prescription?
When does my policy start? ~~ When does my policy end?
Are children under 16 charged for prescriptions? ~~ Are children over 16 charged for prescriptions?

@education_admin
When does the semester start? ~~ When does the semester end?
What's the earliest I can submit my dissertation? ~~ What's the latest I can submit my dissertation?
Do I get a refund if I withdraw before week 4? ~~ Do I get a refund if I withdraw after week 4?
What grades are below a pass? ~~ What grades are above a pass?
Can I change modules before the add/drop deadline? ~~ Can I change modules after the add/drop deadline?
When does the library open during exams? ~~ When does the library close during exams?
Are students over 21 classed as mature students? ~~ Are students under 21 classed as mature students?
What happens to my marks from the first year? ~~ What happens to my marks from the final year?

@cooking
Should I salt the steak before cooking? ~~ Should I salt the steak after cooking?
Do I add the pasta before the water boils? ~~ Do I add the pasta after the water boils?
Is chicken safe above 75C? ~~ Is chicken safe below 75C?
How long does dough rise before shaping? ~~ How long does dough rise after shaping?
Should I add garlic at the start or end of cooking? ~~ Should I add garlic at the end of cooking?
Can I eat food that's past its best before date? ~~ Can I eat food that's past its use by date?
What's the earliest I can make the cake before the party? ~~ What's the latest I can ice the cake before the party?
Is the fridge temperature fine above 5C? ~~ Is the fridge temperature fine below 5C?

@general_knowledge
What happened before the Big Bang? ~~ What happened after the Big Bang?
Who was the first person to climb Everest? ~~ Who was the last person to die on Everest?
What is the highest temperature ever recorded? ~~ What is the lowest temperature ever recorded?
When did the Roman Empire begin? ~~ When did the Roman Empire end?
What was the earliest known civilisation? ~~ What was the most recent civilisation to be discovered?
Which planets are closer to the Sun than Earth? ~~ Which planets are farther from the Sun than Earth?
What happened in the years before the French Revolution? ~~ What happened in the years after the French Revolution?
What's the first day of spring? ~~ What's the last day of spring?

@programming
How do I run a function before each test in pytest? ~~ How do I run a function after each test in pytest?
How do I get commits since a tag in git? ~~ How do I get commits up to a tag in git?
How do I select rows where the date is before 2020 in SQL? ~~ How do I select rows where the date is after 2020 in SQL?
How do I run code before the page loads in JavaScript? ~~ How do I run code after the page loads in JavaScript?
How do I find values above the mean in pandas? ~~ How do I find values below the mean in pandas?
How do I get the first element of a list in Python? ~~ How do I get the last element of a list in Python?
How do I insert a line before a match with sed? ~~ How do I insert a line after a match with sed?
How do I get logs from the last hour with journalctl? ~~ How do I get logs from before the last boot with journalctl?

@personal_finance
How much income will I need each year after retirement? ~~ How much should I save each year before retirement?
What happens to my pension if I die before retirement? ~~ What happens to my pension if I die after retirement?
Is interest above the personal savings allowance taxed? ~~ Is interest below the personal savings allowance taxed?
What's the earliest I can access my pension? ~~ What's the latest I can start taking my pension?
Should I buy a house before the rate rise? ~~ Should I buy a house after the rate rise?
How much should I have saved by 30? ~~ How much should I have saved by 50?
What should I do with my money in the first year of retirement? ~~ What should I do with my money in the last year before retirement?
Are savings above 85,000 protected? ~~ Are savings below 85,000 protected?
'''
