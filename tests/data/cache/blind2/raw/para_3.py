# Hand-written paraphrase pairs (same_answer = true), part 3.
CATEGORY = "paraphrase"
DATA = r'''
@subscriptions_streaming
How do I cancel my Fennix subscription? ~~ I want to stop paying for Fennix, how do I end my membership?
How many screens can I watch on at once with Fennix Standard? ~~ On the Standard plan, how many devices can stream at the same time?
Why was I charged after cancelling? ~~ I cancelled my subscription but still got billed, how come?
How do I change my payment card on Fennix? ~~ My card expired, where do I put in the new one for my Fennix account?
Can I download shows to watch offline? ~~ Is it possible to save episodes onto my phone to watch without internet?
How do I remove a device from my account? ~~ My ex is still logged into my streaming account on their TV, how do I kick that device off?
Is there a free trial? ~~ can i try fennix for free before paying
How do I turn on subtitles? ~~ where's the setting to show captions on screen
Why does Fennix keep buffering? ~~ Videos on Fennix keep stopping to load, what can I do?
How do I create a kids profile? ~~ I want a separate profile for my children with only child-friendly stuff, how do I set that up?
Can I share my account with someone who doesn't live with me? ~~ Is it allowed to let a friend in another house use my login?
How do I reset my Fennix password? ~~ i forgot my fennix password and cant log in
When will I be billed each month? ~~ What day of the month does my subscription payment come out?
How do I switch to the annual plan? ~~ I'd like to pay yearly instead of monthly, how do I change over?
Why is a show no longer available? ~~ A series I was watching disappeared from the catalogue, why?
Can I pause my subscription instead of cancelling? ~~ Is there an option to put my membership on hold for a while?
How do I get a refund for an accidental renewal? ~~ My subscription renewed and I didn't mean it to, can I get that money back?
Does Fennix support 4K? ~~ Can I watch in ultra HD on Fennix?
How do I sign out of all devices? ~~ Is there a way to log my account out everywhere at once?
How do I change my plan to a cheaper one? ~~ I want to downgrade to a lower-priced tier, how?
Why can't I play Fennix on my smart TV? ~~ The Fennix app won't work on my television, what should I try?
How do I add an extra member to my Fennix account? ~~ Can I pay to add someone outside my household to my plan? How?
How do I cancel my Tandlo Music Premium? ~~ I'd like to stop my premium subscription on Tandlo Music, where do I do that?
Can I listen to Tandlo Music offline? ~~ Is it possible to download songs in Tandlo to play without a connection?
How does the Tandlo family plan work? ~~ Can you explain how the family subscription on Tandlo Music is set up?
Is there a student discount on Tandlo Music? ~~ do students get cheaper tandlo premium
How do I stop autoplay of the next episode? ~~ I hate that the next episode starts automatically, how do I turn that off?
Why is my subscription more expensive than advertised? ~~ I'm paying more than the price shown on your site, why?
How do I update my billing email? ~~ I want receipts sent to a different email address, where do I change it?
How do I get my viewing history deleted? ~~ Can I clear the list of things I've watched? How?
Why was my account put on hold? ~~ My streaming account says it's on hold, what does that mean and why?
Can I gift a Fennix subscription? ~~ Is it possible to buy Fennix for someone else as a present?
How do I change the language of the audio? ~~ The show is dubbed, how do I switch it back to the original language?
Does cancelling delete my profiles and watch history? ~~ If I stop my membership, will I lose my profiles and the stuff I've watched?
Why does it say too many people are using my account? ~~ I keep getting an error that too many streams are active, what's going on?

@hr_payroll
When is payday this month? ~~ What date will salaries be paid this month?
How do I update my bank details for payroll? ~~ I've changed banks, how do I make sure my salary goes into the new account?
How much annual leave do I have left? ~~ where can i see how many holiday days i still have
How do I request time off? ~~ What's the process for booking a day of holiday?
Where can I download my payslip? ~~ I need my latest pay stub, where do I get it?
How do I report sick leave? ~~ I'm ill and can't come in today, how do I log that properly?
Why is my pay lower this month? ~~ My salary came in less than usual this month, what could explain it?
How do I get a P60 or annual tax summary? ~~ Where can I find the end-of-year document showing my pay and tax?
How do I change my tax withholding? ~~ I'd like less or more tax taken out of my paycheck, how do I adjust it?
How is overtime paid? ~~ What rate do I get for working extra hours beyond my contract?
How do I enrol in the company pension scheme? ~~ I want to join the workplace pension, how do I sign up?
When do new starters get their first pay? ~~ I just joined, when will I receive my first salary?
How do I claim work expenses? ~~ I paid for a work trip myself, how do I get reimbursed?
What is the parental leave policy? ~~ How much time off do we get when we have a baby?
How do I change my emergency contact? ~~ I need to update who the company should call if something happens to me, how?
How do I request a salary advance? ~~ Is it possible to get some of my pay early, and how do I ask?
How do I get an employment verification letter? ~~ My landlord wants proof that I work here, how do I get a letter confirming it?
What happens to unused holiday at the end of the year? ~~ If I don't take all my leave by December, do I lose it?
How do I report a payroll error? ~~ I think my pay was calculated wrong, who do I tell?
How do I update my home address with HR? ~~ I've moved, how do I tell HR my new address?
How do I change my working hours to part time? ~~ I want to reduce my hours, what's the process for requesting part-time?
When do I get my bonus? ~~ At what time of year is the annual bonus paid?
How do I resign? ~~ I want to hand in my notice, what do I need to do?
How much notice do I have to give before leaving? ~~ What's the notice period I need to work when I quit?
How do I log my hours on the timesheet? ~~ where do i enter the hours i worked this week
What is the sick pay policy? ~~ Do I still get paid when I'm off sick, and how much?
How do I access the employee benefits portal? ~~ Where do I log in to see my staff perks and benefits?
Can I carry over holiday to next year? ~~ Is it possible to roll unused annual leave into the next year?
How do I apply for an internal job? ~~ I saw a vacancy in another team, how do I put myself forward?
Who do I talk to about a problem with my manager? ~~ I'm having issues with my line manager, who can I raise this with confidentially?
How do I change my name on the payroll system? ~~ I got married and took my partner's surname, how do I update it on my pay records?
Is there a cycle to work scheme? ~~ Does the company offer a scheme to buy a bike through salary sacrifice?
How are deductions on my payslip calculated? ~~ Can someone explain what all the amounts taken off my pay stub are?
How do I book bereavement leave? ~~ A close family member has died, how do I arrange time off?
When will my pay rise show on my payslip? ~~ I was told I'm getting a raise, which payslip will it appear on?

@it_helpdesk
How do I reset my work password? ~~ I've forgotten the password for my company account, how can I get a new one?
How do I connect to the VPN from home? ~~ what are the steps to get on the company vpn when working remotely
My laptop won't turn on, what should I do? ~~ The work laptop is dead, pressing the power button does nothing. Help?
How do I set up my email on my phone? ~~ I want to get my work emails on my mobile, how do I add the account?
How do I install software on my work laptop? ~~ I need a program that isn't on my computer, how do I get it installed?
How do I connect to the office printer? ~~ My laptop can't find the printer on our floor, how do I add it?
Why is my computer so slow? ~~ My PC takes ages to do anything, what can I do to speed it up?
How do I set up multi-factor authentication? ~~ I've been told to turn on MFA for my account, how do I do that?
What should I do if I clicked a phishing link? ~~ I think I clicked on a dodgy link in a scam email, what now?
How do I share a folder with a colleague? ~~ I want to give a coworker access to one of my folders, how?
How do I recover a deleted file? ~~ I accidentally deleted an important document, can I get it back?
How do I book a meeting room? ~~ where can i reserve a conference room for a meeting
How do I set an out of office reply? ~~ I'm going on holiday, how do I set up an automatic email response?
Why can't I access the shared drive? ~~ I'm getting access denied on the team drive, why?
How do I get a new monitor? ~~ I'd like a second screen for my desk, who do I ask and how?
How do I unlock my account after too many login attempts? ~~ I typed my password wrong too many times and now I'm locked out, what do I do?
How do I request admin rights on my computer? ~~ I need administrator access on my laptop to do my job, how can I request it?
My Teams calls keep dropping, how do I fix it? ~~ Video meetings keep cutting out on me, what can I try?
How do I update my laptop? ~~ How do I install the latest system updates on my work machine?
How do I report a lost work phone? ~~ I've lost my company mobile, who do I tell and what happens next?
How do I add a signature to my emails? ~~ where do i set up the sign off block that goes at the bottom of my emails
How do I get access to a new application? ~~ I need a login for one of the company's systems, how do I request access?
Why are my emails going to spam for external recipients? ~~ Clients say my messages land in their junk folder, why would that be?
How do I free up space on my drive? ~~ My disk is almost full, how can I make some room?
How do I change my screen lock timeout? ~~ My laptop locks too quickly when I'm idle, can I make it wait longer?
How do I connect to the guest wifi in the office? ~~ A visitor needs internet in the office, how do they get on the guest network?
How do I open a ticket with IT? ~~ what's the way to log a support request with the help desk
How do I migrate my files to a new laptop? ~~ I'm getting a replacement computer, how do I move all my stuff onto it?
Why does Outlook keep asking for my password? ~~ My email client pops up a login prompt over and over, how do I stop it?
How do I share my screen in a video call? ~~ During a meeting, how can I show everyone what's on my monitor?
How do I restore a previous version of a document? ~~ I saved over a file by mistake, can I go back to the earlier version?
How do I set up a shared mailbox? ~~ Our team wants one inbox we can all access, how is that set up?
How do I get my laptop repaired? ~~ The keyboard on my work laptop is broken, how do I get it fixed?
What do I do if my account has been hacked? ~~ I think someone else got into my work account, what steps should I take?
How do I encrypt a USB stick? ~~ I need to put sensitive files on a memory stick securely, how do I lock it with encryption?

@rental_housing
How do I get my deposit back when I move out? ~~ I'm leaving my flat at the end of the month, what's the process to get my bond returned?
Who is responsible for fixing a broken boiler in a rented flat? ~~ The boiler in my rental has packed in, is it my job or the landlord's to sort it?
How much notice do I need to give my landlord before leaving? ~~ If I want to move out, how far in advance do I have to tell my landlord?
Can my landlord increase the rent during a fixed-term lease? ~~ I'm halfway through my tenancy agreement, is the landlord allowed to put the rent up now?
How do I report a repair to Larchmont Lettings? ~~ Something's broken in my rental, how do I let Larchmont know?
Can I have a pet in my rental? ~~ Am I allowed to keep a dog in the flat I'm renting?
What should I do about mould in my rented home? ~~ There's black mold growing on the walls of my rental, what are my options?
Can my landlord enter without telling me? ~~ Is the landlord allowed to just come into my flat without notice?
How do I pay my rent online? ~~ where can i pay my rent through the internet
What happens if I pay my rent late? ~~ If my rent is a few days overdue, what will happen?
Can I sublet my room? ~~ Is it allowed for me to rent out my room to someone else while I'm away?
What documents do I need to apply for a rental? ~~ What paperwork do landlords usually ask for when applying for a flat?
Do I need a guarantor to rent? ~~ Is it required to have someone guarantee my rent when signing a lease?
How do I end my tenancy early? ~~ I need to get out of my lease before it finishes, what are my options?
Who pays for council tax in a rented property? ~~ In a rental, is it the tenant or the landlord who pays council tax?
Can my landlord keep my deposit for normal wear and tear? ~~ Is a landlord allowed to take money from the deposit for ordinary wear?
How do I dispute a deposit deduction? ~~ The landlord is keeping part of my deposit and I disagree, how do I challenge it?
What's included in my rent? ~~ Does my rent cover bills like water and internet or is it just the flat?
How do I add a new tenant to my lease? ~~ My partner is moving in, how do we get them put on the tenancy agreement?
Can I decorate my rented flat? ~~ Am I allowed to paint the walls in the place I'm renting?
What is a break clause? ~~ can someone explain what the break clause in my lease means
How long does the landlord have to fix a repair? ~~ After I report a problem, how quickly does the landlord have to sort it?
How do I renew my lease? ~~ My tenancy is ending soon and I want to stay, what do I do to extend it?
Is renters insurance required? ~~ Do I have to get contents insurance as a tenant?
Can I get my rent reduced if repairs aren't done? ~~ The landlord is ignoring repairs, am I entitled to pay less rent?
Who do I contact for an emergency repair out of hours? ~~ A pipe burst in my rental at night, who do I call?
What is an inventory check? ~~ what's the inventory inspection they do at the start of a tenancy
Can I be evicted without a reason? ~~ Is it legal for my landlord to kick me out without giving any grounds?
How do I get a reference from my landlord? ~~ I need my current landlord to vouch for me for a new rental, how do I ask?
What happens at the end of a fixed-term tenancy? ~~ When my fixed lease runs out, what happens if we don't sign a new one?
How do I change the locks in a rental? ~~ Am I allowed to swap the locks on my rented house, and how should I go about it?
Is the landlord responsible for pest control? ~~ We have mice in our rental, should the landlord pay to get rid of them?
How is the holding deposit handled if I don't take the flat? ~~ If I pay a holding deposit and then change my mind, do I get it back?
Can I install a satellite dish on my rental? ~~ Is it ok for a tenant to put a dish on the outside wall?
How do I set up a rent payment plan if I'm behind? ~~ I'm in arrears, can I arrange to pay it back bit by bit?

@healthcare_admin
How do I book an appointment with my GP? ~~ What's the way to get an appointment to see my family doctor?
How do I order a repeat prescription? ~~ My regular medication is running low, how do I ask for more?
How do I register with a new doctor's surgery? ~~ I've moved to a new area, how do I sign up with a local practice?
How do I get a copy of my medical records? ~~ I want to see everything in my health file, how do I request it?
How do I cancel my appointment? ~~ i cant make my appointment anymore, how do i cancel it
Does my Halcyon Health plan cover physiotherapy? ~~ Will Halcyon pay for physio sessions under my policy?
How do I get a referral to a specialist? ~~ I need to see a consultant, how do I get referred?
How do I claim back the cost of a dental check-up from Halcyon? ~~ I paid for my dentist visit myself, how do I get reimbursed by my health plan?
How long are the waiting times for a hospital appointment? ~~ After being referred, how long will I wait to be seen at the hospital?
Can I get a sick note online? ~~ Is it possible to get a fit note without going into the surgery?
How do I change my pharmacy for prescriptions? ~~ I'd like my prescriptions to go to a different chemist, how?
What should I bring to my first appointment? ~~ I have a new patient appointment, what do I need to take with me?
How do I get my test results? ~~ I had blood taken last week, how do I find out the results?
Is there a charge for a prescription? ~~ How much do I have to pay for each item on my prescription?
How do I update my contact details with the clinic? ~~ I've got a new phone number, how do I tell the practice?
Do I need a referral for Halcyon to cover a specialist? ~~ Will my health plan pay for a specialist visit if I go without a GP referral?
How do I book a vaccination? ~~ where can i get an appointment for my jabs
How do I get pre-authorisation for surgery? ~~ My plan says surgery needs approval first, how do I get it approved?
Can I see a doctor on the weekend? ~~ Are there any appointments on Saturdays or Sundays?
How do I make a complaint about the surgery? ~~ I'm unhappy with how I was treated at the practice, how do I complain formally?
How do I get an interpreter for my appointment? ~~ My mother doesn't speak English well, can we have a translator at her appointment?
What is my Halcyon policy number? ~~ where do i find my membership number for my health insurance
How do I request a home visit? ~~ My dad can't leave the house, can a doctor come to him? How do we ask?
How do I add my newborn to my health plan? ~~ We just had a baby, how do we get her covered on my Halcyon policy?
What's the excess on my health insurance? ~~ How much do I have to pay myself before Halcyon starts covering costs?
How do I get a medical certificate for travel? ~~ I need a letter from my doctor saying I'm fit to fly, how do I get one?
How do I check if a hospital is in my network? ~~ Is this hospital covered by my plan? How can I find out which ones are included?
Why was my health insurance claim denied? ~~ Halcyon rejected my claim, how do I find out why?
Can I do a video consultation instead of going in? ~~ Is it possible to speak to the doctor over a video call rather than in person?
How do I transfer my medical records to a new doctor? ~~ I'm changing practice, how do my records get sent over?
What are the surgery opening hours? ~~ When is the doctor's office open?
How do I get a prescription while I'm abroad? ~~ I'm overseas and running out of my medication, how can I get more?
How long is a prescription valid for? ~~ For how long can I use a prescription before it expires?
Can I choose which doctor I see? ~~ Is it possible to request a specific GP for my appointments?
How do I get a fit-to-work note after sick leave? ~~ My employer wants a note saying I can return to work, how do I get it?
'''
