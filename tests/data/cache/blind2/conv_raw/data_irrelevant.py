# Hand-written unrelated one-turn exchanges, prepended as "irrelevant history".
from convlib import irr

irr("cooking", """U: what's a good substitute for buttermilk in pancakes?
A: Stir 1 tablespoon of lemon juice or white vinegar into 1 cup of milk and let it sit for 5 minutes.""")
irr("cooking", """U: how long do hard-boiled eggs take?
A: Bring the water to a boil, then simmer the eggs for 10 to 12 minutes and cool them in ice water.""")
irr("cooking", """U: Can you freeze cooked rice?
A: Yes. Cool it quickly, pack it flat in freezer bags, and it will keep for about a month.""")
irr("cooking", """U: how long should I boil spaghetti?
A: Most dried spaghetti takes 9 to 11 minutes; taste it a minute before the package time.""")
irr("programming", """U: how do I reverse a string in Python?
A: Use slicing: my_string[::-1].""")
irr("programming", """U: What's the git command to see which branch I'm on?
A: Run git branch --show-current, or just git status.""")
irr("programming", """U: what does HTTP status 429 mean?
A: 429 Too Many Requests: you've hit a rate limit and should wait before retrying.""")
irr("programming", """U: how do I exit vim
A: Press Esc, then type :q and press Enter. Use :wq to save and quit, or :q! to quit without saving.""")
irr("travel", """U: Do I need a visa to visit Canada as a UK citizen?
A: UK citizens flying to Canada don't need a visa but do need an eTA, which you apply for online.""")
irr("travel", """U: what's the best time of year to visit Iceland?
A: June to August for long days and mild weather; September to March if you want a chance at the northern lights.""")
irr("travel", """U: How early should I get to the airport for an international flight?
A: Aim for about 3 hours before departure for international flights.""")
irr("it_help", """U: how do I take a screenshot on Windows?
A: Press Windows + Shift + S to open the snipping tool and select the area you want.""")
irr("it_help", """U: My Bluetooth headphones won't connect to my laptop.
A: Remove the headphones from your Bluetooth device list, put them in pairing mode, and pair them again.""")
irr("it_help", """U: how do I change my email signature in Outlook?
A: In Outlook, go to Settings > Mail > Compose and reply, then edit the Email signature box.""")
irr("banking", """U: what's the routing number for Brightwell Bank?
A: Brightwell Bank's routing number for ACH and direct deposit is 021407839.""")
irr("banking", """U: What time does the Kestrel branch on Main Street close on Saturdays?
A: The Main Street branch is open 9am to 1pm on Saturdays.""")
irr("cards", """U: do I need to set a travel notice on my Corvana card?
A: Corvana no longer needs travel notices. Just make sure your phone number is current for fraud alerts.""")
irr("cards", """U: What's the difference between APR and APY?
A: APR is the yearly interest rate without compounding; APY includes the effect of compounding.""")
irr("telecom", """U: how do I check my voicemail from another phone?
A: Call your own number, press * when the greeting starts, then enter your voicemail PIN.""")
irr("internet", """U: what do the blinking lights on my router mean?
A: A blinking white light usually means it's starting up; solid white means connected, and red means there's no internet signal.""")
irr("utilities", """U: Is it cheaper to run the dishwasher at night?
A: If you're on a time-of-use rate, yes. Off-peak electricity after 9pm is usually much cheaper.""")
irr("utilities", """U: how do I read my gas meter?
A: Read the digits from left to right, ignoring any red dials or numbers after the decimal point.""")
irr("tax", """U: what's the difference between a W-2 and a 1099?
A: A W-2 reports wages from an employer with taxes withheld; a 1099-NEC reports payments to independent contractors, with no withholding.""")
irr("hr_payroll", """U: What's the holiday schedule for Orrin this year?
A: Orrin observes 11 paid holidays; the full calendar is on the HR page under Policies > Holidays.""")
irr("hr_payroll", """U: how do I update my emergency contact in Payvanta?
A: In Payvanta, go to Profile > Personal Info > Emergency Contacts and click Edit.""")
irr("healthcare_admin", """U: what are Meadowcrest's urgent care hours?
A: Meadowcrest urgent care is open 8am to 8pm every day, including weekends.""")
irr("healthcare_admin", """U: What should I bring to my first appointment?
A: Bring a photo ID, your insurance card, a list of your medications, and any relevant medical records.""")
irr("rental_housing", """U: is renters insurance required at Harbourline buildings?
A: Yes, Harbourline leases require at least $100,000 in liability coverage.""")
irr("ecommerce", """U: Does Parcelio deliver on Sundays?
A: In most metro areas, yes. Sunday delivery is available for standard orders placed by Friday.""")
irr("ecommerce", """U: how do I write a product review on Shopvane?
A: Go to Your Orders, pick the item, and select Write a review.""")
irr("subscriptions", """U: can I watch Streamory on two TVs at the same time?
A: That depends on your plan: Basic allows 1 stream, Standard 2, and Premium 4.""")
irr("insurance", """U: What does comprehensive car insurance cover?
A: Comprehensive covers damage not caused by a collision, such as theft, hail, fire, vandalism and hitting an animal.""")
irr("general", """U: what's the capital of Australia?
A: Canberra.""")
irr("general", """U: how many ounces are in a cup?
A: There are 8 fluid ounces in a US cup.""")
irr("general", """U: can you recommend a good book for a long flight?
A: If you like mysteries, a fast-paced detective novel works well; for nonfiction, a popular-science book is easy to dip in and out of.""")
irr("general", """U: What's 15% of 240?
A: 15% of 240 is 36.""")
irr("general", """U: how do you say thank you in Japanese?
A: "Arigatou gozaimasu" is the polite form; "arigatou" is more casual.""")
irr("general", """U: what's a good gift for a coworker who's retiring?
A: Something personal works well: a framed team photo, a nice pen, or a gift card for a hobby they love.""")
irr("general", """U: is it going to rain in Seattle this weekend?
A: I don't have live weather data, but a weather app or the local forecast will have the latest for Seattle.""")
irr("general", """U: What's the time difference between London and New York?
A: New York is usually 5 hours behind London.""")
irr("general", """U: can you help me write a birthday message for my grandma?
A: Of course! Something like: Happy birthday, Grandma! Thank you for all the love, the stories and the cookies. Can't wait to celebrate with you.""")
irr("general", """U: how many steps a day should I aim for?
A: Around 7,000 to 10,000 steps a day is a common goal, but any increase over your current level helps.""")
