# Hand-written paraphrase pairs (same_answer = true), part 2.
CATEGORY = "paraphrase"
DATA = r'''
@utilities
How do I submit a meter reading to Pondera Energy? ~~ Where do I send the numbers from my electricity meter so Pondera can bill me properly?
Why is my energy bill so high this month? ~~ My electric bill shot up compared with last month, what could be behind that?
How do I set up a direct debit for my gas bill? ~~ I'd like my gas to be paid automatically from my bank each month, how?
What should I do if I smell gas? ~~ There's a gas smell in my kitchen, what are the steps I should take right now?
How do I move my energy account to a new home? ~~ I'm moving out next month, how do I take my Pondera account with me to the new place?
How do I get a smart meter installed? ~~ Can you fit one of those smart meters at my house? How do I book it?
Who do I call when there's a power cut? ~~ The electricity is off on my whole street, who should I contact?
How do I read my electricity meter? ~~ I've no idea which numbers on the meter to write down, how do I take a reading?
What is a standing charge? ~~ can someone explain the daily fixed fee on my energy bill
How do I switch to a different tariff? ~~ I want to change the energy plan I'm on, how do I do that?
Can I get help paying my energy bills? ~~ I'm struggling to afford gas and electric, is there any support available?
Why has my direct debit amount gone up? ~~ Pondera increased my monthly payment, why did that happen?
How do I report a water leak in the street? ~~ There's water gushing out of the pavement near my house, who do I tell and how?
How is my water bill calculated? ~~ what decides how much lockbrook water charges me
Can I get a water meter fitted? ~~ Is it possible to switch from a flat water charge to a metered one?
How do I get a refund of my credit balance? ~~ My energy account is in credit, how do I get that money paid back to me?
Why did I get an estimated bill? ~~ My bill says it's an estimate, why wasn't it based on a real reading?
How do I close my account when I move out? ~~ I'm leaving the property, what do I need to do to stop my utilities account there?
What are the Economy 7 off-peak hours? ~~ When does the cheaper night rate apply on Economy 7?
How do I set up an account for a new property? ~~ Just moved into a flat, how do I get the electricity put in my name?
Is my boiler covered if it breaks down? ~~ Does my Pondera plan include repairs to the boiler if it stops working?
How do I top up my prepayment meter? ~~ how do i add credit to my pay as you go electricity key
Why is my smart meter display not showing usage? ~~ The in-home display for my smart meter is blank, why isn't it showing how much I'm using?
How do I get a copy of an old bill? ~~ I need a bill from last year for paperwork, how do I get it?
Can I pay my water bill in instalments? ~~ Is it possible to split my annual water charge into smaller payments?
How do I complain about my energy supplier? ~~ what's the process if i want to make a formal complaint about pondera
How do I export solar power back to the grid and get paid? ~~ I've got panels on my roof, how do I get paid for the electricity I send back to the grid?
What happens if I can't pay my gas bill? ~~ If I fall behind on my gas payments, what will you do?
How do I register as a priority services customer? ~~ My mum is elderly and needs power for medical equipment, how do we get her on the priority list?
How long will the planned power outage last? ~~ There's scheduled maintenance on the electricity tonight, how long will we be without power?
Is there a fee to switch energy suppliers? ~~ Will it cost me anything to move to another energy company?
How do I check if my water is safe to drink after a boil notice? ~~ We had a boil water notice, how do I know when it's ok to drink from the tap again?
Why is my water pressure so low? ~~ The water barely trickles out of my taps, what could be the cause?
How do I update the name on the energy account after a death? ~~ My father passed away and the electricity is in his name, how do I change it over?

@tax
When is the deadline to file my self-assessment tax return? ~~ By what date do I have to submit my annual self assessment?
How do I find my tax code? ~~ where do i see which tax code i'm on
Do I need to pay tax on my savings interest? ~~ Is the interest I earn in a savings account taxable?
How do I claim a tax refund for working from home? ~~ I've been working from home, how can I get tax relief back for that?
What expenses can I deduct as a freelancer? ~~ I'm self-employed, which of my business costs am I allowed to take off my taxable income?
How do I register as self-employed for tax? ~~ I've just started freelancing, how do I tell the tax office I'm working for myself?
What happens if I file my tax return late? ~~ I missed the deadline for my tax return, what are the penalties?
Do I have to pay tax on money I make selling things online? ~~ I sell old clothes and bits on marketplace apps, is that income taxable?
How do I get a copy of my tax return from last year? ~~ I need last year's filed return for a mortgage application, how do I get a copy?
What is the personal allowance for this tax year? ~~ How much can I earn this year before I start paying income tax?
How do I pay my tax bill in instalments? ~~ I can't afford to pay the tax I owe all at once, can I set up a payment plan?
How long should I keep my tax records? ~~ For how many years do I need to hang on to receipts and tax paperwork?
Do I need to declare rental income from a lodger? ~~ I rent a room in my house to someone, do I have to tell the tax office about that money?
Why have I been sent a tax bill when I'm employed? ~~ I'm on PAYE but got a letter saying I owe tax, how come?
How is capital gains tax calculated on shares? ~~ If I sell shares at a profit, how do I work out the tax on the gain?
Can I claim tax relief on pension contributions? ~~ Do I get tax back on the money I put into my pension?
How do I change my address with the tax office? ~~ I moved, how do I update my address for tax purposes?
What counts as a dependent for tax purposes? ~~ who can i list as a dependant on my tax return
How do I amend a tax return I've already submitted? ~~ I made a mistake on the return I filed, how do I correct it?
Are gifts from family taxable? ~~ My parents gave me money, do I need to pay tax on that?
How do I get a tax identification number? ~~ what's the process to apply for a TIN
Is marriage allowance worth claiming? ~~ Should we bother applying for the marriage tax allowance, what's the benefit?
What is the VAT registration threshold? ~~ At what turnover does my business have to register for VAT?
How do I claim mileage for using my own car for work? ~~ I drive my own vehicle for my job, how do I get tax relief on the miles?
Do students have to pay income tax on part-time jobs? ~~ I'm at university and work part time, will tax come out of my wages?
How do I report foreign income? ~~ I earn money from a job overseas, how do I declare it on my tax return?
Why is my tax refund taking so long? ~~ I filed weeks ago and still haven't got my refund, what's the holdup?
Can I file my tax return online? ~~ Is there a way to submit my return over the internet instead of on paper?
What's the difference between a tax credit and a tax deduction? ~~ how does a credit differ from a deduction when it comes to tax
Do I pay tax on a redundancy payment? ~~ I got a lump sum when I was laid off, is that taxable?
How is tax worked out on a second job? ~~ I've started another part-time job alongside my main one, how will it be taxed?
How do I claim back tax on a uniform I have to wash? ~~ I have to clean my own work uniform, can I get any tax back for that, and how?
What records do I need to keep as a landlord for tax? ~~ I rent out a flat, what documents should I keep for my taxes?
Do I have to pay tax on crypto gains? ~~ If I made money selling cryptocurrency, is that taxable?

@travel_bookings
How do I change the dates on my Voyaro hotel booking? ~~ I need to move my hotel stay to different nights, how do I do that through Voyaro?
Can I cancel my booking for free? ~~ If I cancel this reservation, will I get all my money back?
What time is check-in at the hotel? ~~ From what time can I get into my room on arrival day?
How do I add breakfast to my reservation? ~~ I didn't pick breakfast when I booked, can I add it on now? How?
Where can I find my booking confirmation? ~~ I can't find the email with my reservation details, where else can I see it?
Do I need a visa to travel to Japan as a UK citizen? ~~ I've got a British passport, do I have to apply for a visa before visiting Japan?
How do I request an early check-in? ~~ Our flight lands in the morning, how can we ask the hotel to let us in early?
Is the payment taken at booking or at the hotel? ~~ When do I actually get charged, when I reserve or when I arrive?
How do I get an invoice for my booking? ~~ I need a receipt for my hotel stay for work expenses, where do I get it?
Can I book a room for someone else? ~~ Is it possible to reserve a hotel room that my friend will be staying in, not me?
How do I change the name on a flight booking? ~~ I spelled the passenger's name wrong on the ticket, how do I fix it?
What happens if I miss my connecting flight? ~~ If my first flight is late and I miss the connection, what happens next?
How do I choose my seat on the flight? ~~ Where can I pick which seat I sit in for my booked flight?
Does the hotel have free parking? ~~ Will I have to pay to park my car at the hotel?
How do I use a Voyaro voucher code? ~~ I've got a discount code from Voyaro, where do I put it in?
Can I bring my dog to the hotel? ~~ Are pets allowed at this property?
How do I check in online for my flight? ~~ what's the way to do web check-in before going to the airport
What is your refund policy for package holidays? ~~ If I cancel a package trip I booked with you, how much do I get back?
How early should I get to the airport for an international flight? ~~ How long before a flight abroad should I arrive at the airport?
How do I add a passenger to an existing booking? ~~ My sister now wants to come with us, can she be added to the reservation we already made?
Why hasn't my booking been confirmed yet? ~~ I booked hours ago and it still says pending, why isn't it confirmed?
Does my hotel room have air conditioning? ~~ Is there AC in the room I booked?
How do I get from the airport to the city centre? ~~ whats the best way into town from the airport
Can I pay in my own currency? ~~ Is it possible to be charged in my home currency rather than the local one?
How do I report a problem with my hotel room during my stay? ~~ The room I'm in has issues, who do I complain to while I'm still here?
Do I need travel insurance for my trip? ~~ Is it necessary to buy travel cover for this holiday?
How do I extend my stay by a night? ~~ We want to stay one more night at the hotel, how do we add it?
Is the city tax included in the price? ~~ Do I have to pay the local tourist tax separately at the hotel?
How do I book a rental car with my hotel? ~~ Can I add a hire car to my Voyaro trip, and how?
Can I get a refund if my flight is cancelled by the airline? ~~ The airline cancelled my flight, am I entitled to my money back?
How do I find the hotel's phone number? ~~ I need to call the property directly, where is their contact number?
How many days before the trip can I cancel without a fee? ~~ What's the last point I can cancel and not pay any penalty?
Do I need to print my boarding pass? ~~ Is a boarding pass on my phone enough or should I have a paper copy?
How do I request a cot for my baby? ~~ We're travelling with an infant, how do we ask for a crib in the room?
Can I get a late checkout? ~~ Is it possible to stay in the room past the normal checkout time?

@airline_baggage
How much does a checked bag cost on Brisa Air? ~~ What's the fee to put a suitcase in the hold with Brisa?
What is the cabin bag size limit on Brisa Air? ~~ How big can my carry-on be on a Brisa flight?
My suitcase didn't arrive, what do I do? ~~ Just landed and my luggage never came out on the belt. What are my next steps?
Can I bring a power bank in my checked luggage? ~~ Is it ok to pack a portable charger in the suitcase that goes in the hold?
How do I add extra baggage to my booking? ~~ I need to take another bag, how can I add it to my existing reservation?
What's the weight limit for checked bags? ~~ How heavy can my hold suitcase be before I pay extra?
How much is the overweight baggage fee? ~~ If my bag is heavier than allowed, how much will Brisa charge?
Can I take liquids in my hand luggage? ~~ what are the rules for bringing liquids in carry on
How do I claim compensation for a damaged suitcase? ~~ The airline broke the wheel off my case, how do I get them to pay for it?
Can I bring a pram or stroller on board? ~~ Travelling with a baby, are buggies allowed onto the plane?
How do I track my delayed baggage? ~~ My bag is lost somewhere, where can I check on its whereabouts?
Can I take my golf clubs as checked baggage? ~~ Is it possible to fly with a golf bag, and how is it handled?
Is a personal item allowed in addition to my cabin bag? ~~ Besides my carry-on, can I also bring a small bag like a handbag?
How long does the airline have to find my lost bag? ~~ After how many days is a missing suitcase considered permanently lost?
Can I bring food through airport security? ~~ Am I allowed to have snacks with me when I go through security?
Can I pack my laptop in my checked bag? ~~ Is it allowed to put a laptop in the luggage that goes in the hold?
How do I bring a musical instrument on a flight? ~~ I play the violin, how can I take it with me when flying with Brisa?
What items are banned from hand luggage? ~~ What things aren't allowed in your carry-on bag?
Can I pay for extra baggage at the airport? ~~ Is it possible to buy additional luggage allowance at the check-in desk?
Does my ticket include a checked bag? ~~ Is a hold suitcase part of the fare I bought?
Can I take medication in my hand luggage? ~~ I need my prescription tablets during the flight, can I keep them in my carry-on?
What is the baggage allowance for infants? ~~ How much luggage can I bring for a baby under two?
Can I bring a wheelchair on the plane? ~~ How does flying with my own wheelchair work with Brisa Air?
Why was I charged for my cabin bag at the gate? ~~ Staff made me pay for my carry-on at boarding, why?
How do I ship a bicycle on Brisa Air? ~~ I want to fly with my bike, what are the steps and cost?
What is the compensation for delayed luggage? ~~ My bags arrived two days late, how much can I get back for essentials I had to buy?
Can I share baggage allowance with my travel companion? ~~ Can two people on the same booking pool their luggage weight?
Do I need to collect my bag at a connecting airport? ~~ On a connecting flight, is my luggage transferred automatically or do I pick it up?
Can I take an e-cigarette on the plane? ~~ Are vapes allowed on Brisa flights, and where do I pack them?
How do I report a missing item from my suitcase? ~~ Something was taken out of my checked bag during the flight, how do I report that?
Can I lock my checked suitcase? ~~ Is it alright to put a padlock on the bag I check in?
How much are sports equipment fees? ~~ What does Brisa charge to carry sports gear like skis?
Can I take a knife in checked luggage? ~~ Is it permitted to pack a kitchen knife in my hold bag?
What are the rules for flying with a pet in the cabin? ~~ Can I bring my small cat on board with me, and what do I need?

@ecommerce_orders
Where is my Cartwell order? ~~ I ordered from Cartwell a week ago and nothing's arrived, how can I see where it is?
How do I return an item to Cartwell? ~~ I want to send something back that I bought on Cartwell, what's the process?
How long do refunds take after a return? ~~ Once you get my returned item, how many days until I see the money back?
Can I change my delivery address after ordering? ~~ I put the wrong address on my order, can it be sent somewhere else now?
How do I cancel an order that hasn't shipped yet? ~~ My order hasn't been dispatched, can I still stop it? How?
Do you ship internationally? ~~ Can I order from you if I live outside the country?
My parcel says delivered but I don't have it, what do I do? ~~ Tracking shows it was delivered but there's nothing here. What now?
How much is delivery? ~~ What are your shipping costs?
Can I return an item without the original packaging? ~~ I threw away the box it came in, can I still send it back?
How do I use a discount code at checkout? ~~ where do i enter a promo code when paying
Why was my order cancelled? ~~ Cartwell cancelled my order without telling me why, what could have happened?
I received the wrong item, what should I do? ~~ The thing you sent isn't what I ordered. How do I sort this out?
How do I exchange an item for a different size? ~~ The shoes are too small, can I swap them for a bigger pair? How?
Is there free returns? ~~ Do I have to pay to send something back to you?
When will my order be dispatched? ~~ How long before you actually send out the stuff I ordered?
How do I track my parcel? ~~ I've got a tracking number, where do I use it to follow my delivery?
My item arrived damaged, how do I get a replacement? ~~ What I ordered came broken, can you send me a new one and how do I ask?
Can I pay with buy now pay later? ~~ Do you let customers split the payment into instalments at checkout?
How do I get an invoice for my order? ~~ I need a VAT receipt for something I bought, where can I download it?
Can I add items to an order I've already placed? ~~ I forgot something, is it possible to put more things into my existing order?
What is your returns window? ~~ How many days do I have to send something back?
Why was I charged twice for my order? ~~ My card was billed two times for one purchase on Cartwell, why?
Do you offer next-day delivery? ~~ Can I get my order by tomorrow if I pay for faster shipping?
How do I delete my Cartwell account? ~~ I don't want a Cartwell account anymore, how do I remove it completely?
Can I collect my order from a store instead? ~~ Is click and collect available so I can pick it up in person?
How do I leave a review for a product? ~~ Where can I write feedback about something I bought?
My order is missing an item, what do I do? ~~ The box arrived but one of the things I paid for isn't in it. How do I get it sorted?
Can I get a price adjustment if an item goes on sale after I buy it? ~~ I bought something and it dropped in price a few days later, can I get the difference back?
How do I return a gift without the receipt? ~~ Someone bought me something from Cartwell but I don't have proof of purchase, can I still return it?
Why hasn't my refund arrived yet? ~~ You said my refund was processed ages ago but the money's not back, why?
Do I need to be home to sign for my delivery? ~~ Will the courier need a signature, or can they leave it if I'm out?
How do I change the payment method on my order? ~~ I want to pay for my existing order with a different card, how?
Can I order as a guest without an account? ~~ Is it possible to check out without signing up?
What courier does Cartwell use? ~~ which delivery company brings cartwell parcels
How do I reschedule my delivery? ~~ I won't be in on the delivery day, can I pick a different day?
'''
