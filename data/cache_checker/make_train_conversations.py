#!/usr/bin/env python3
"""Generate train_conversations.jsonl: pairs of multi-turn chats for the cache-checker.

Original data written for this project. Hand-written conversation skeletons
(history versions, follow-up paraphrases, look-alike follow-ups, referent and
detail slot values) are multiplied into labelled pairs. Stdlib only; seed 0.

The model sees each conversation condensed as
    "<earlier user turn> | ... | <last user message>"  (last 3 user turns).

Usage: python3 make_train_conversations.py
"""
import json
import os
import re
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "train_conversations.jsonl")

SCEN = []


def S(topic, X, H, F, FD, D=None):
    """topic; X referent slot values (str -> {x}, or dict); H list of history
    versions, each a list of (user, assistant) templates; F follow-up
    paraphrases (same meaning); FD look-alike follow-up groups (different
    meaning, each group a list of paraphrases); D detail slot values that
    change the answer (str -> {d}, or dict)."""
    SCEN.append(dict(
        topic=topic,
        X=[x if isinstance(x, dict) else {"x": x} for x in X],
        D=[d if isinstance(d, dict) else {"d": d} for d in D] if D else [{}],
        H=H, F=F, FD=FD))


# ---------------------------------------------------------------- support
S("support",
  X=["Pindle Music Premium plan", "Quorra Gym membership", "Tavvy Meals weekly box",
     "Korvo VPN subscription", "Vidra TV streaming plan"],
  H=[[("I'm paying for a {x} but I hardly use it anymore.",
       "Sorry to hear that. I can help with your {x} - would you like to change it or stop it?")],
     [("I barely use my {x} these days, yet I still get charged every month.",
       "I understand. What would you like to do with your {x}?")],
     [("Hi, I have a question about my account.", "Sure, what do you need help with?"),
      ("It's about my {x}. I never really use it.", "Got it, I can see your {x}. I can make changes to it for you.")]],
  F=["cancel it", "please cancel that for me", "I'd like to cancel it", "can you cancel it?"],
  FD=[["pause it instead", "can I pause it for a month instead?"],
      ["switch me to the cheaper tier", "downgrade it to the cheapest option"],
      ["remove the add-ons from it"]])

S("support",
  X=["Nimbal Notes Pro", "the Zentrik Drive 2 TB plan", "Orbix Cloud Backup", "Drafto Writer Premium"],
  D=["just for myself", "for a team of 10 people"],
  H=[[("I'm thinking about getting {x} {d}.",
       "{x} is a solid choice. It includes priority support and all premium features.")],
     [("I'm considering signing up for {x}.", "Good pick - it comes with all the premium features and priority support."),
      ("It would be {d}.", "Got it, {d}.")]],
  F=["how much is it per month?", "what's the monthly price?", "what would it cost me each month?"],
  FD=[["how much is it per year?", "what's the yearly price?"], ["is there a free trial?"],
      ["how much is it per month for students?"]])

S("support",
  X=["Orbix Cloud storage upgrade", "Vellum Reader ebook bundle", "Skylo seat upgrade", "Pindle Music annual plan"],
  D=["yesterday", "four months ago"],
  H=[[("I bought the {x} {d} and I regret it.",
       "I'm sorry it didn't work out. Let me check the options for your {x}.")],
     [("I purchased the {x} {d}, but it was a mistake.",
       "Sorry about that! I can look into what's possible with your {x}.")]],
  F=["can I get a refund?", "is it possible to get my money back?", "am I eligible for a refund?"],
  FD=[["can I get store credit instead?"], ["can I transfer it to a friend?"],
      ["how long does a refund usually take?"]])

S("support",
  X=["Kestra Bank", "Plimo Mail", "Zentrik Drive", "Fablo Kids"],
  D=["I still know my current password", "I've forgotten my current password"],
  H=[[("I want to set a new password for my {x} account. {d}.",
       "No problem, I can walk you through it for {x}.")],
     [("I need a new password on my {x} account - {d}.", "Sure, I can help with your {x} password.")]],
  F=["how do I do that?", "what are the steps for that?", "how do I go about doing that?"],
  FD=[["how do I do that on the mobile app?"], ["how do I do that for my kid's account?"]])

S("support",
  X=["Corvel standing desk", "Mireo espresso machine", "Halvo smart speaker", "Ridgeo robot vacuum"],
  D=["standard shipping", "express shipping"],
  H=[[("I just ordered the {x} from your store with {d}.", "Thanks for your order! Your {x} is being prepared.")],
     [("I placed an order for a {x} a few minutes ago.", "Thank you! The {x} order is confirmed."),
      ("I picked {d} at checkout.", "Noted, your order is on {d}.")]],
  F=["when will it arrive?", "when should I expect it?", "how long until it gets here?"],
  FD=[["when will it ship?", "when does it leave the warehouse?"], ["can I change the delivery address?"],
      ["can I still cancel it?"]])

S("support",
  X=["Tavvy Recipes app", "Lingvo Spanish course app", "Drafto writing app", "Nimbal Notes app"],
  D=["free version", "paid version"],
  H=[[("I'm using the {d} of the {x}.", "Great! The {d} of the {x} covers most everyday needs.")],
     [("I've got the {d} of the {x} on my phone.", "Nice - the {d} of the {x} has most of the core features.")]],
  F=["does it work offline?", "can I use it without internet?", "will it work without a connection?"],
  FD=[["does it work on Android?"], ["does it sync between devices?"], ["does it show ads?"]])

S("support",
  X=["Halvo smart speaker", "Ridgeo R5 robot vacuum", "Pexa e-reader", "Vellum smart photo frame"],
  H=[[("My {x} has been acting weird all week.", "Sorry to hear that. Sometimes a reset helps with the {x}.")],
     [("My {x} keeps glitching lately.", "That's frustrating. A reset often fixes {x} glitches.")],
     [("Something's off with my {x}, it's been buggy for days.", "I'm sorry. Resetting the {x} usually sorts that out.")]],
  F=["how do I factory reset it?", "how can I do a factory reset?", "what's the way to restore it to factory settings?"],
  FD=[["how do I restart it?", "how do I just reboot it?"], ["how do I update its firmware?"]])

S("support",
  X=["Vidra TV family plan", "Pindle Music family plan", "Okko Cloud family storage plan"],
  H=[[("I'm the owner of our {x}.", "Great, as the owner you can manage everyone on the {x}.")],
     [("I'm the account holder for our {x}.", "Perfect - the account holder controls the members of the {x}.")]],
  F=["how do I add my sister to it?", "can I add my sister to it, and how?", "how would I add my sister to that plan?"],
  FD=[["how do I remove my sister from it?"], ["how do I transfer it to my sister?"],
      ["how do I add my sister's kids to it?"]])

S("support",
  X=["dental cleaning at Smilewell Clinic", "haircut at Mane Street Studio", "car service at Redline Garage",
     "massage at Calmora Spa"],
  D=["tomorrow at 9am", "next Friday at 3pm"],
  H=[[("I have a {x} booked for {d}.", "I can see your {x} booked for {d}. What can I do for you?")],
     [("Hi, I need help with a booking.", "Of course. Which booking is it?"),
      ("My {x}, {d}.", "Found it: your {x}, {d}. How can I help?")]],
  F=["cancel it", "please cancel it", "I need to cancel that appointment", "can you cancel it for me?"],
  FD=[["reschedule it to next week", "can you move it to next week?"], ["move it an hour later"],
      ["add my partner to it as well"]])

S("support",
  X=["Aerolux", "SkyPelican", "Norda Air"],
  D=["Basic", "Flex"],
  H=[[("I booked a flight with {x} to Madrid on their {d} fare.", "Thanks. {x} {d} fares have specific rules for changes.")],
     [("I have a ticket with {x} to Madrid, {d} fare.", "Okay, the {x} {d} fare comes with its own change rules.")]],
  F=["how much does it cost to change it?", "what's the change fee?", "how much would I pay to change the date?"],
  FD=[["how much does it cost to cancel it?"], ["how much is a checked bag?"], ["how much does it cost to upgrade it?"]])

S("support",
  X=["Drafto crashes whenever I export a PDF", "Nimbal Notes won't sync my notes",
     "Okko Cloud keeps logging me out"],
  D=["on my Windows laptop", "on my iPhone"],
  H=[[("{x} {d}.", "Sorry about that! That's a known issue in some versions.")],
     [("I'm having an issue: {x} {d}.", "Thanks for reporting it - we've seen that problem before.")]],
  F=["how do I fix it?", "what can I do to fix this?", "is there a way to fix that?"],
  FD=[["will I lose my data?"], ["how do I report it?"], ["when will you fix it?"]])

S("support",
  X=["Basic travel", "Premium travel"],
  D=["My phone got stolen on holiday", "I missed my connecting flight"],
  H=[[("I have the {x} plan with Covala Insurance.", "Thanks, how can I help with your {x} plan?"),
      ("{d}.", "Sorry to hear that. Let me look at your policy.")],
     [("I'm on Covala's {x} plan. {d}.", "That's unfortunate. I'll check what your {x} policy says.")]],
  F=["does my plan cover it?", "am I covered for that?", "will the insurance pay for that?"],
  FD=[["how do I file a claim?"], ["how long does a claim take?"], ["is there a deductible for that?"]])

S("support",
  X=["Halvo smart speaker", "Pexa e-reader", "Ridgeo robot vacuum", "Mireo espresso machine"],
  D=["eight months ago", "three years ago"],
  H=[[("My {x} stopped working. I bought it {d}.", "Sorry about that! Let's see what we can do about your {x}.")],
     [("I bought a {x} {d} and now it won't turn on.", "That's annoying. Let's figure out the options for the {x}.")]],
  F=["is it still under warranty?", "would the warranty still cover it?", "is it covered by the warranty?"],
  FD=[["can I extend the warranty?"], ["how do I get it repaired?"], ["can I get a replacement?"]])

S("finance",
  X=["Kestra Bank Cashback card", "Plover Travel Rewards card", "Norvik Student card"],
  H=[[("I'm thinking of applying for the {x}.", "The {x} is popular. Happy to answer questions about it.")],
     [("I'm considering the {x}.", "Sure - the {x} is a common pick. What would you like to know?")]],
  F=["is there an annual fee?", "does it have a yearly fee?", "do I have to pay a fee every year?"],
  FD=[["is there a foreign transaction fee?"], ["is there a late payment fee?"], ["is there a sign-up bonus?"]])

S("shopping",
  X=["a pair of running shoes", "a blender", "a winter coat", "a set of headphones"],
  D=["It's still unopened in the box", "I've already used it a few times"],
  H=[[("I bought {x} from Tessamo last week. {d}.", "Thanks for the details about your purchase.")],
     [("Last week I ordered {x} on Tessamo.", "Okay, I can see that order."),
      ("{d}.", "Got it, thanks for explaining.")]],
  F=["can I return it?", "is it possible to send it back?", "am I able to return it?"],
  FD=[["can I exchange it?"], ["who pays for return shipping?"], ["can I return it in a store?"]])

# ----------------------------------------------------------------- travel
S("travel",
  X=["Lyon", "Nice", "Reykjavik", "Kyoto", "Edinburgh"],
  H=[[("What's the weather like in {x} in summer?", "Summer is a popular time to visit {x}, with long days and mild evenings.")],
     [("How's the summer weather in {x}?", "{x} usually has long, fairly mild summer days.")]],
  F=["and in winter?", "what about winter?", "and what's it like in the winter months?"],
  FD=[["and in spring?"], ["and in autumn?"], ["and how crowded is it in winter?"]])

S("travel",
  X=["Japan", "Brazil", "India", "Turkey"],
  D=["a US passport", "an Indian passport"],
  H=[[("I'm planning a two-week trip to {x}. I have {d}.", "Sounds exciting! Two weeks is a good amount of time for {x}.")],
     [("I'll be visiting {x} for two weeks.", "How fun! Two weeks in {x} lets you see quite a lot."),
      ("I hold {d}, by the way.", "Thanks, that's useful to know.")]],
  F=["do I need a visa?", "will I need a visa for that?", "is a visa required for me?"],
  FD=[["do I need a visa to work there?"], ["do I need any vaccinations?"],
      ["how long does my passport need to be valid?"]])

S("travel",
  X=["Paris Charles de Gaulle", "Rome Fiumicino", "Lisbon", "Barcelona El Prat"],
  D=["by train", "by taxi"],
  H=[[("I'm landing at {x} airport and want to get to the city center {d}.", "Going {d} from {x} is straightforward.")],
     [("I'll arrive at {x} airport and plan to head into the city center {d}.", "Getting into the center {d} from {x} is easy.")]],
  F=["how long does that take?", "how long is the trip?", "how much time should I plan for that?"],
  FD=[["how much does that cost?"], ["is that the fastest option?"], ["can I pay for that by card?"]])

S("travel",
  X=["Iceland", "Morocco", "Scotland", "Vietnam"],
  D=["July", "January"],
  H=[[("I'm spending a week in {x} in {d}.", "A week in {x} in {d} sounds great!")],
     [("I'll be in {x} for a week this coming {d}.", "Lovely - {x} in {d} should be a memorable trip.")]],
  F=["what should I pack?", "what should I bring with me?", "what do I need to pack for that?"],
  FD=[["what should I do there?"], ["what should I pack for the kids?"], ["what shoes should I pack?"]])

S("travel",
  X=["Japan", "the US", "France", "Egypt"],
  H=[[("I'm traveling to {x} next month.", "Nice! Let me know if you need any advice about {x}.")],
     [("Next month I'm going on a trip to {x}.", "Great! Happy to help with anything about {x}.")]],
  F=["how much should I tip at restaurants there?", "what's the normal tip at restaurants there?",
     "how much do people tip in restaurants there?"],
  FD=[["how much should I tip taxi drivers there?"], ["how much should I tip hotel staff there?"],
      ["do restaurants there add a service charge?"]])

S("travel",
  X=["the Alfama district in Lisbon", "Shibuya in Tokyo", "the Latin Quarter in Paris", "the Gothic Quarter in Barcelona"],
  H=[[("I booked a hotel in {x} for three nights.", "Good choice, {x} is a lively area.")],
     [("My hotel for the next three nights is in {x}.", "Nice, {x} is a great area to stay in.")]],
  F=["is it walkable?", "can I get around on foot easily?", "is it easy to explore on foot?"],
  FD=[["is it safe at night?"], ["is it noisy at night?"], ["is it good for kids?"]])

S("travel",
  X=["Patagonia", "Bali", "Iceland", "Morocco", "Peru"],
  H=[[("I've always wanted to visit {x}.", "{x} is an amazing destination!")],
     [("Visiting {x} has been on my bucket list for years.", "{x} is well worth it!")]],
  F=["when's the best time to go?", "what's the best time of year to visit?", "which month is best to go?"],
  FD=[["when is it cheapest to go?"], ["when is the rainy season?"], ["when is it least crowded?"]])

S("travel",
  X=["$180", "£150", "¥20,000"],
  D=["per night", "for the whole week"],
  H=[[("The hotel I like costs {x} {d}.", "That's a fairly typical price for that area.")],
     [("The hotel I'm looking at is {x} {d}.", "That's about average for the area.")]],
  F=["how much is that in euros?", "what's that in euros?", "can you convert that to euros?"],
  FD=[["how much is that in Swiss francs?"], ["how much is that including tax?"]])

# ---------------------------------------------------------------- cooking
S("cooking",
  X=["lasagna", "chili con carne", "paella", "shepherd's pie"],
  D=["for two people", "for eight people"],
  H=[[("Can you give me a recipe for {x} {d}?", "Sure! Here's a classic {x} {d}, with the ingredients and steps.")],
     [("I need a {x} recipe.", "Of course - here's a traditional {x} recipe."),
      ("It has to be {d}.", "No problem, here are the quantities adjusted {d}.")]],
  F=["make it vegetarian", "can you make it vegetarian?", "now a vegetarian version please"],
  FD=[["make it vegan"], ["make it gluten-free"], ["make it spicier"]])

S("cooking",
  X=["banana bread", "chocolate chip cookies", "sourdough bread", "carrot cake", "brownies"],
  H=[[("I'm baking {x} this afternoon.", "Sounds delicious, enjoy baking the {x}!")],
     [("This afternoon I'm making {x}.", "Yum, good luck with the {x}!")]],
  F=["how long does it bake?", "how long should it be in the oven?", "what's the baking time?"],
  FD=[["what temperature should the oven be?"], ["how long should it cool before cutting?"], ["how long does it keep?"]])

S("cooking",
  X=["pancakes", "brownies", "muffins"],
  D=["eggs", "butter", "buttermilk"],
  H=[[("I'm making {x} and the recipe calls for {d}, but I don't have any.", "No worries, that's a common problem with {x}.")],
     [("The {x} recipe I'm following needs {d} and I've run out.", "That happens! It's easy to adapt {x}.")]],
  F=["what can I use instead?", "what's a good substitute?", "what could I replace it with?"],
  FD=[["can I just leave it out?"], ["will it change the taste?"]])

S("cooking",
  X=["cooked rice", "homemade pesto", "hard-boiled eggs", "chicken soup"],
  H=[[("I made a big batch of {x} today.", "Nice, batch cooking saves a lot of time.")],
     [("I just made a lot of {x}.", "Happens to everyone! It's handy to have leftovers.")]],
  F=["how long does it last in the fridge?", "how many days will it keep in the fridge?", "how long can I keep it refrigerated?"],
  FD=[["how long does it last in the freezer?"], ["can I reheat it more than once?"],
      ["how long can it sit out at room temperature?"]])

S("cooking",
  X=["grilled salmon", "beef stew", "mushroom risotto", "a spicy Thai curry"],
  H=[[("I'm cooking {x} for dinner tonight.", "Lovely, {x} is a great dinner choice.")],
     [("Tonight I'm making {x} for dinner.", "Sounds tasty! {x} is a great pick.")]],
  F=["what wine goes with it?", "which wine should I serve with that?", "what wine would pair well with it?"],
  FD=[["what beer goes with it?"], ["what side dish goes with it?"], ["what dessert goes with it?"]])

S("cooking",
  X=["lamb vindaloo", "chicken korma", "tom yum soup", "mapo tofu"],
  H=[[("We're ordering takeout and my friend suggested {x}.", "{x} is a popular choice!")],
     [("My friend wants us to order {x} tonight.", "Good call, {x} is a favorite for many.")]],
  F=["is it spicy?", "how spicy is it?", "is it very hot, spice-wise?"],
  FD=[["is it gluten-free?"], ["is it dairy-free?"], ["is it filling?"]])

# ----------------------------------------------------------------- health
S("health",
  X=["ibuprofen", "aspirin", "paracetamol"],
  D=["4-month-old baby", "10-year-old son"],
  H=[[("My {d} has a fever and all I have at home is {x}.", "I'm sorry they're unwell. Keep them hydrated and watch the temperature.")],
     [("My {d} is running a temperature.", "Sorry to hear that. Make sure they drink plenty of fluids and monitor the fever."),
      ("The only medicine in the house is {x}.", "Okay, thanks for letting me know.")]],
  F=["is it safe to give it to them?", "can I give it to them?", "is that ok to give?"],
  FD=[["how often can I give it?"], ["what dose should I give?"], ["when should I call a doctor?"]])

S("health",
  X=["running", "swimming", "strength training", "cycling"],
  D=["a complete beginner", "already pretty fit"],
  H=[[("I want to start {x} to get in shape. I'm {d}.", "Great goal! {x} is an excellent way to build fitness.")],
     [("I'm thinking of taking up {x} to improve my fitness, and I'm {d}.", "Good idea - {x} is great for overall fitness.")]],
  F=["how often should I do it?", "how many times a week should I do it?", "how many sessions per week should I aim for?"],
  FD=[["how long should each session be?"], ["what should I eat before it?"], ["what gear do I need for it?"]])

S("health",
  X=["green tea", "espresso", "hot chocolate", "chamomile tea"],
  H=[[("I've started drinking a cup of {x} every evening.", "That can be a nice routine.")],
     [("Lately I have {x} every night after dinner.", "Sounds like a cozy habit.")]],
  F=["is it ok to drink it before bed?", "will it affect my sleep?", "can I have it right before sleeping?"],
  FD=[["is it ok to drink it on an empty stomach?"], ["is it ok to drink it while pregnant?"],
      ["is it ok to drink it every day?"]])

S("health",
  X=["melatonin", "vitamin D supplements", "iron tablets", "cetirizine"],
  H=[[("My doctor suggested I take {x}.", "Taking {x} is quite common. Do follow your doctor's instructions.")],
     [("I've been told by my GP to start {x}.", "That's a common recommendation. Stick to the dose your GP gave you.")]],
  F=["what are the side effects?", "does it have any side effects?", "are there side effects I should know about?"],
  FD=[["what's the usual dose?"], ["can I take it with alcohol?"], ["how long does it take to work?"]])

S("health",
  X=["ankle", "wrist", "knee"],
  D=["an hour ago", "three weeks ago"],
  H=[[("I twisted my {x} {d}.", "Sorry to hear that. Rest it as much as you can.")],
     [("I hurt my {x} by twisting it {d}.", "Ouch, sorry. Try to keep weight off it where possible.")]],
  F=["should I put ice or heat on it?", "is ice or heat better for it?", "should I use ice or a heating pad?"],
  FD=[["should I wrap it?"], ["should I see a doctor?"], ["should I keep it elevated?"]])

S("health",
  X=["sushi", "brie", "soft-boiled eggs", "smoked salmon"],
  H=[[("I'm pregnant and really craving {x}.", "Cravings are very common in pregnancy!")],
     [("I'm expecting and I'm craving {x} like crazy.", "Totally normal to have cravings while pregnant.")]],
  F=["is it safe to eat?", "can I eat it?", "is it ok for me to have it?"],
  FD=[["is it safe while breastfeeding?"], ["how much of it is safe to eat?"]])

S("health",
  X=["white rice", "pasta", "quinoa", "oatmeal"],
  D=["one cup", "two cups"],
  H=[[("I had {d} of cooked {x} for lunch.", "Thanks for logging that.")],
     [("For lunch I ate {d} of cooked {x}.", "Got it, noted.")]],
  F=["how many calories is that?", "how many calories was that?", "what's the calorie count for that?"],
  FD=[["how much protein is that?"], ["how many carbs is that?"], ["how much fiber is that?"]])

# ----------------------------------------------------------------- coding
S("coding",
  X=[{"x": "a closure", "def": "a function that captures variables from the scope where it was defined"},
     {"x": "an iterator", "def": "an object that produces values one at a time"},
     {"x": "a generic function", "def": "a function that works with many types through type parameters"}],
  D=["Python", "Rust"],
  H=[[("What is {x} in {d}?", "In {d}, {x} is {def}.")],
     [("Can you explain what {x} is in {d}?", "Sure - {x} in {d} is basically {def}.")]],
  F=["show me an example", "can you show me an example?", "could you give me a quick example of that?"],
  FD=[["when should I avoid it?"], ["show me a common mistake with it"], ["how is it different in Java?"]])

S("coding",
  X=["eval() in Python", "global variables in JavaScript", "SELECT * in production SQL queries",
     "git push --force on a shared branch"],
  H=[[("Is it a good idea to use {x}?", "Generally, no - I'd avoid {x}.")],
     [("Should I be using {x}?", "In most cases I'd recommend against {x}.")]],
  F=["why?", "why not?", "how come?", "why is that?"],
  FD=[["what should I use instead?"], ["is it ever okay?"], ["why do people still use it?"]])

S("coding",
  X=[{"x": "reverses a string", "code": "def reverse(s):\n    return s[::-1]"},
     {"x": "checks if a number is even", "code": "def is_even(n):\n    return n % 2 == 0"},
     {"x": "removes duplicates from a list", "code": "def dedupe(items):\n    return list(dict.fromkeys(items))"},
     {"x": "counts the vowels in a string", "code": "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s.lower())"}],
  H=[[("Write a Python function that {x}.", "Here you go:\n\n```python\n{code}\n```")],
     [("Can you write me a Python function which {x}?", "Sure:\n\n```python\n{code}\n```")]],
  F=["now do it in JavaScript", "can you write the same thing in JavaScript?", "convert it to JavaScript"],
  FD=[["now do it in TypeScript"], ["add type hints to it"], ["write unit tests for it"]])

S("coding",
  X=["a commit with the wrong files", "a merge of the feature branch into main", "a commit with a typo in the message"],
  D=["I haven't pushed it yet", "I already pushed it to the remote"],
  H=[[("I just made {x} by mistake, and {d}.", "No problem, this is fixable in git.")],
     [("Oops, I accidentally made {x}.", "Don't worry, git can handle this. Have you pushed it?"),
      ("{d}.", "Okay, that matters for how we undo it.")]],
  F=["how do I undo it?", "how can I revert that?", "what's the way to undo it?"],
  FD=[["how do I see what it changed?"], ["how do I undo it but keep my changes staged?"]])

S("coding",
  X=["binary search", "bubble sort", "quicksort", "a hash table lookup"],
  H=[[("Can you explain how {x} works?", "Sure! Here's the idea behind {x} in brief.")],
     [("I'm trying to understand {x}.", "Happy to help - {x} comes up a lot in interviews.")]],
  F=["what's its time complexity?", "what's the big-O runtime?", "how fast is it in big-O terms?"],
  FD=[["what's its space complexity?"], ["is it stable?"], ["what's its best-case time complexity?"]])

S("coding",
  X=["PostgreSQL", "Node.js", "Docker", "Redis"],
  D=["Windows", "Ubuntu", "macOS"],
  H=[[("I want to use {x} for a side project. I'm on {d}.", "{x} works well on {d}.")],
     [("I'm starting a side project that needs {x}, and my machine runs {d}.", "Good choice, {x} runs fine on {d}.")]],
  F=["how do I install it?", "how do I get it installed?", "what's the easiest way to install it?"],
  FD=[["how do I uninstall it?"], ["how do I update it?"], ["how do I check which version I have?"]])

S("coding",
  X=["Python dict", "Java HashMap", "Go map", "C# Dictionary"],
  H=[[("I'm storing shared state in a {x}.", "A {x} is a common choice for that.")],
     [("My app keeps shared state in a {x}.", "That's a typical use of a {x}.")]],
  F=["is it thread-safe?", "can I safely use it from multiple threads?", "is it safe for concurrent access?"],
  FD=[["is it ordered?"], ["can it have null keys?"], ["is it faster than a list?"]])

S("coding",
  X=["rm -rf", "pip install -e .", "docker run -d", "git commit --amend"],
  H=[[("I keep seeing `{x}` in tutorials.", "`{x}` is very common in tutorials.")],
     [("Lots of guides I read use `{x}`.", "Yes, `{x}` shows up in many guides.")]],
  F=["what does it do?", "what does that command actually do?", "what does it do exactly?"],
  FD=[["is it dangerous?"], ["how do I undo it?"], ["what's the Windows equivalent?"]])

# ---------------------------------------------------------------- finance
S("finance",
  X=["$2,000 in interest from a savings account", "a $5,000 gift from my parents",
     "$800 from selling my old furniture", "a $1,500 bonus at work"],
  D=["US", "UK"],
  H=[[("I live in the {d} and I got {x} this year.", "Thanks, that's useful context.")],
     [("This year I received {x}.", "Okay. Which country are you in?"),
      ("I'm in the {d}.", "Got it, thanks.")]],
  F=["is it taxable?", "do I have to pay tax on it?", "will that be taxed?"],
  FD=[["do I need to report it?"], ["when is the tax deadline?"], ["how do I pay tax on it?"]])

S("finance",
  X=["$20,000 car loan over 5 years", "$10,000 personal loan over 3 years", "$300,000 mortgage over 30 years"],
  D=["5%", "8%"],
  H=[[("I'm looking at a {x} at {d} interest.", "Okay, those are the key numbers we need.")],
     [("I'm considering taking out a {x}.", "Sure. What interest rate were you offered?"),
      ("They offered me {d}.", "Got it - that's enough to work it out.")]],
  F=["what would my monthly payment be?", "how much would I pay each month?", "what's the monthly payment on that?"],
  FD=[["how much interest would I pay in total?"], ["what if I pay an extra $100 a month?"],
      ["what would my yearly payment be?"]])

S("finance",
  X=["$6,000 for a car down payment", "$12,000 for a wedding", "$3,000 for an emergency fund"],
  D=["$250", "$500"],
  H=[[("I want to save {x}, and I can put away {d} a month.", "That's a great plan.")],
     [("My goal is to save {x}. I can set aside {d} every month.", "Nice, that's a solid goal.")]],
  F=["how long will that take?", "how many months will it take me?", "how long until I get there?"],
  FD=[["what if I put it in a 4% savings account?"], ["how much will I have after a year?"]])

# --------------------------------------------------------------- shopping
S("shopping",
  X=["the Corvel S2 and the Corvel S3 standing desks", "the Halvo Mini and the Halvo Max speakers",
     "the Ridgeo R5 and the Ridgeo R7 robot vacuums", "the Mireo Bar and the Mireo Pro espresso machines"],
  H=[[("I'm trying to choose between {x}.", "Both are good options; it depends on your needs.")],
     [("I can't decide between {x}.", "They're both solid; it comes down to what you need.")]],
  F=["which one is cheaper?", "which is less expensive?", "which of the two costs less?"],
  FD=[["which one is quieter?"], ["which one is cheaper to run?"], ["which one is more popular?"]])

S("shopping",
  X=["astronomy", "baking", "gardening", "chess"],
  H=[[("What's a good gift for someone who loves {x}?", "A few ideas for someone into {x}: a quality book, a useful tool, or a class.")],
     [("Any gift ideas for a person who's really into {x}?", "For someone into {x}, think books, gear, or a workshop.")]],
  F=["what about for kids?", "and for a child?", "what if it's for a kid?"],
  FD=[["what about for teenagers?"], ["what about under $20?"], ["what about for a beginner?"]])

S("shopping",
  X=["a bike", "a pair of skis", "a wetsuit"],
  D=[{"d": "5-year-old", "age": "5"}, {"d": "12-year-old", "age": "12"}],
  H=[[("I want to buy {x} for my {d} son.", "That's a great gift!")],
     [("I'm shopping for {x} for my son - he's {age}.", "Nice, he'll love it.")]],
  F=["what size should I get?", "which size is right for him?", "what size would fit him?"],
  FD=[["how much should I spend?"], ["which brand should I get?"]])

# ------------------------------------------------------------ home repair
S("home",
  X=["regrout a bathroom floor", "paint a small bedroom", "replace a kitchen faucet", "patch a hole in drywall"],
  H=[[("How do I {x}?", "Here's a quick overview: prep the area, gather your tools, and work step by step.")],
     [("I want to {x} this weekend.", "Nice project! Do you want instructions?"),
      ("Yes, what's the process?", "In short: prepare the space, get the right tools, and go step by step.")]],
  F=["how long does that take?", "how much time does it usually take?", "how long will that take me?"],
  FD=[["how much does that cost?"], ["what tools do I need?"], ["how long would a professional take?"]])

S("home",
  X=["replace a light switch", "fix a leaking gas pipe", "replace a broken window pane", "clean my chimney"],
  H=[[("I need to {x}.", "Okay, let's talk through it.")],
     [("I have to {x} this weekend.", "Sure, happy to help you plan it.")]],
  F=["is it safe to do it myself?", "can I safely do that myself?", "is it ok to DIY it?"],
  FD=[["do I need a permit for it?"], ["how much would it cost to hire someone?"], ["what tools do I need?"]])

S("home",
  X=["kitchen sink", "toilet", "shower drain"],
  D=["making a gurgling noise", "draining really slowly"],
  H=[[("My {x} is {d}.", "That's a common household issue.")],
     [("Lately my {x} has been {d}.", "That happens quite a lot.")]],
  F=["what's causing it?", "why is it doing that?", "what could be the cause?"],
  FD=[["can I fix it myself?"], ["who should I call about it?"], ["is it urgent?"]])

S("home",
  X=["a wooden fence", "my bathroom walls", "my kitchen cabinets"],
  D=["white over the old white", "white over a dark navy"],
  H=[[("I'm painting {x}, {d}.", "Nice project!")],
     [("I'm going to repaint {x} - {d}.", "Sounds like a good weekend job.")]],
  F=["how many coats will it need?", "how many coats should I do?", "how many layers of paint do I need?"],
  FD=[["how long should I wait between coats?"], ["what kind of paint should I use?"], ["do I need primer?"]])

# ------------------------------------------------------------------- pets
S("pets",
  X=["chocolate", "grapes", "onions", "avocado"],
  H=[[("Is {x} toxic to dogs?", "Yes, {x} can be harmful to dogs, so keep it out of reach.")],
     [("Can dogs safely eat {x}?", "No, dogs shouldn't eat {x} - it can make them sick.")]],
  F=["what about cats?", "and for cats?", "is it the same for cats?"],
  FD=[["what about rabbits?"], ["what about parrots?"], ["what about horses?"]])

S("pets",
  X=["puppy", "kitten", "rabbit"],
  D=["8 weeks old", "6 months old"],
  H=[[("I just adopted a {x} that's {d}.", "Congratulations on your new {x}!")],
     [("We brought home our new {x} yesterday!", "How exciting, congrats! How old is it?"),
      ("It's {d}.", "Lovely age.")]],
  F=["how often should I feed it?", "how many times a day should it eat?", "how many meals a day does it need?"],
  FD=[["how much should I feed it?"], ["when should it get vaccinated?"], ["how often should I bathe it?"]])

S("pets",
  X=["Border Collie", "Bulldog", "Chihuahua", "Husky"],
  D=["young", "senior"],
  H=[[("I have a {d} {x}.", "Lovely! A {x} makes a great companion.")],
     [("My dog is a {d} {x}.", "Nice, they're wonderful dogs.")]],
  F=["how much exercise does it need?", "how much exercise should it get each day?", "how much daily exercise is right for it?"],
  FD=[["how much food does it need?"], ["how often does it need grooming?"], ["how much sleep does it need?"]])

S("pets",
  X=[{"x": "my cat", "y": "your cat"}, {"x": "my 30 kg Labrador", "y": "a large dog"},
     {"x": "my pet rabbit", "y": "a rabbit"}],
  H=[[("I'm flying from London to Rome next month and want to bring {x}.", "Travelling with {y} takes some planning.")],
     [("Next month I fly London to Rome and I'd like {x} to come along.", "That's doable, but bringing {y} needs some preparation.")]],
  F=["can it travel in the cabin with me?", "can it stay with me in the cabin?", "is it allowed in the cabin?"],
  FD=[["does it need a pet passport?"], ["does it need to be sedated?"]])

# -------------------------------------------------------------- education
S("education",
  X=[{"x": "photosynthesis", "def": "the process plants use to turn light, water and CO2 into glucose and oxygen"},
     {"x": "inflation", "def": "the general rise in prices over time, which reduces purchasing power"},
     {"x": "entropy", "def": "a measure of disorder, or of how many ways a system can be arranged"},
     {"x": "the Pythagorean theorem", "def": "the rule that in a right triangle a^2 + b^2 = c^2"}],
  H=[[("What is {x}?", "{x} is {def}.")],
     [("Can you tell me what {x} means?", "Sure - {x} refers to {def}.")]],
  F=["explain it like I'm five", "can you explain that more simply?", "say that in simpler terms please"],
  FD=[["explain it in more detail"], ["give me a quiz question about it"], ["explain it like I'm a university student"]])

S("education",
  X=["the heating in my flat is broken", "I'll be paying the rent two days late", "the kitchen tap is leaking"],
  D=["landlord", "letting agent"],
  H=[[("Write a short message telling my {d} that {x}.",
       "Here's a draft: \"Hello, I wanted to let you know that {x}. Could we find a time to sort this out? Thank you.\"")],
     [("Can you draft a quick note to my {d} saying that {x}?",
       "Sure: \"Hello, I wanted to let you know that {x}. Could we find a time to sort this out? Thank you.\"")]],
  F=["translate that into French", "can you put it in French?", "now in French please"],
  FD=[["translate that into Spanish"], ["make it more formal"], ["make it shorter"]])

S("education",
  X=["the bar exam", "the SAT", "my driving theory test"],
  D=["two weeks", "six months"],
  H=[[("I'm taking {x} in {d}.", "Good luck! With {d} to go you can make a solid plan.")],
     [("I'm preparing for {x}.", "Great. When is it?"),
      ("In {d}.", "Okay, that gives us a clear timeline.")]],
  F=["how many hours a day should I study?", "how much should I study each day?", "how many hours of study per day do I need?"],
  FD=[["how many practice tests should I take?"], ["how many hours a week should I study?"],
      ["how many days off should I take?"]])

S("education",
  X=["x^2 + 3x", "x * sin(x)", "e^(2x)", "ln(x) / x"],
  H=[[("I'm working with the function f(x) = {x}.", "Got it, f(x) = {x}. What would you like to do with it?")],
     [("Consider f(x) = {x}.", "Okay, f(x) = {x}. What do you need?")]],
  F=["what's its derivative?", "can you differentiate it?", "find f'(x)"],
  FD=[["what's its integral?"], ["what's its second derivative?"], ["where is it equal to zero?"]])

# ----------------------------------------------------------------- sports
S("sports",
  X=["water polo", "rugby union", "volleyball", "ice hockey"],
  H=[[("I'm watching {x} for the first time and I'm a bit lost.", "{x} can be confusing at first! Happy to explain.")],
     [("First time watching {x} and I don't really get it.", "No worries, {x} takes a bit to get used to.")]],
  F=["how many players are on each team?", "how many players per side?", "how many players does each team have?"],
  FD=[["how many substitutes are allowed?"], ["how long does a match last?"], ["how many points is a goal worth?"]])

S("sports",
  X=["my first 10K", "a marathon", "a half marathon"],
  D=["10 days", "four months"],
  H=[[("I'm running {x} in {d}.", "Exciting! Let's make sure you're ready.")],
     [("In {d} I'll be running {x}.", "Nice! Let's get you ready for it.")]],
  F=["should I start tapering now?", "is it time to taper?", "should I begin my taper yet?"],
  FD=[["should I do a long run this weekend?"], ["should I carb-load?"], ["should I start running every day now?"]])

S("sports",
  X=["tennis", "skiing", "skateboarding"],
  D=[{"d": "6-year-old", "age": "6"}, {"d": "15-year-old", "age": "15"}],
  H=[[("My {d} daughter wants to start {x}.", "That's great! {x} is a fun sport to start.")],
     [("My daughter wants to take up {x}.", "Lovely! How old is she?"),
      ("She's {age}.", "Great age to start.")]],
  F=["what size equipment does she need?", "which size gear should we buy her?", "what equipment size would fit her?"],
  FD=[["how much should we spend on equipment?"], ["should we get lessons first?"], ["what safety gear does she need?"]])

S("sports",
  X=[{"x": "1966 FIFA World Cup", "h": "England"}, {"x": "1998 FIFA World Cup", "h": "France"},
     {"x": "2010 FIFA World Cup", "h": "South Africa"}, {"x": "2003 Rugby World Cup", "h": "Australia"}],
  H=[[("Where was the {x} held?", "The {x} was held in {h}.")],
     [("Which country hosted the {x}?", "{h} hosted the {x}.")]],
  F=["who won it?", "which team won?", "and who took the title?"],
  FD=[["who was the runner-up?"], ["who was the top scorer?"], ["who won the previous one?"]])

# -------------------------------------------------------------- geography
S("geography",
  X=[{"x": "Australia", "f": "the sixth-largest country by area"},
     {"x": "Canada", "f": "the second-largest country by area"},
     {"x": "Turkey", "f": "a country spanning both Europe and Asia"},
     {"x": "Nigeria", "f": "the most populous country in Africa"},
     {"x": "Switzerland", "f": "a landlocked country in the Alps"}],
  H=[[("I'm reading about {x}.", "Nice! {x} is {f}.")],
     [("I've been learning a bit about {x} lately.", "Cool - {x} is {f}.")]],
  F=["what's the capital?", "what's its capital city?", "which city is the capital?"],
  FD=[["what's the largest city?"], ["what's the population?"], ["what currency do they use?"]])

S("geography",
  X=["the Danube", "the Mekong", "the Rhine", "the Mississippi"],
  H=[[("I'm doing a school project on {x}.", "Great topic! {x} is one of the world's famous rivers.")],
     [("My school project is about {x}.", "Nice choice - {x} is a really well-known river.")]],
  F=["how long is it?", "what's its length?", "how many kilometers long is it?"],
  FD=[["how deep is it?"], ["where does it start?"], ["which countries does it flow through?"]])

S("geography",
  X=[{"x": "Lyon", "c": "France", "f": "its food"}, {"x": "Nice", "c": "France", "f": "its seafront promenade"},
     {"x": "Porto", "c": "Portugal", "f": "port wine"}, {"x": "Kraków", "c": "Poland", "f": "its medieval old town"}],
  H=[[("Tell me a bit about {x}.", "{x} is a city in {c}, known for {f}.")],
     [("What do you know about {x}?", "{x} is in {c} and is famous for {f}.")]],
  F=["what's the population?", "how many people live there?", "what's its population?"],
  FD=[["what's the population of the metro area?"], ["what's the population of the whole region?"],
      ["how big is it in square kilometers?"]])

# ---------------------------------------------------------------- history
S("history",
  X=["the Hundred Years' War", "the Thirty Years' War", "the Crimean War", "the War of 1812"],
  H=[[("What was {x} about?", "{x} was a major conflict; here's a short summary of its causes.")],
     [("Can you explain what {x} was about?", "Sure - here's a brief overview of why {x} was fought.")]],
  F=["when did it end?", "what year did it end?", "when was it over?"],
  FD=[["when did it start?"], ["how did it end?"], ["who won it?"]])

S("history",
  X=["the Alhambra", "Angkor Wat", "Machu Picchu", "the Great Wall of China"],
  H=[[("I'm visiting {x} next year.", "How exciting! {x} is a remarkable site.")],
     [("Next year I'm going to see {x}.", "Amazing - {x} is well worth the trip.")]],
  F=["who built it?", "who constructed it?", "who was it built by?"],
  FD=[["when was it built?"], ["why was it built?"], ["how was it built?"]])

S("history",
  X=[{"x": "the first Moon landing", "y": "1969"}, {"x": "the fall of the Berlin Wall", "y": "1989"},
     {"x": "the first iPhone launch", "y": "2007"}, {"x": "the Watergate break-in", "y": "1972"}],
  H=[[("When did {x} happen?", "{x} happened in {y}.")],
     [("What year was {x}?", "It was in {y}.")]],
  F=["who was the US president at the time?", "who was president of the US then?", "which US president was in office then?"],
  FD=[["who was the UK prime minister at the time?"], ["who was the German chancellor at the time?"],
      ["who was the US vice president at the time?"]])


# ------------------------------------------------ multi-turn extras (2 turns)
S("support",
  X=["Telvo Basic", "Telvo Unlimited"],
  D=["Spain", "the US"],
  H=[[("I'm on the {x} plan with Telvo Mobile.", "Thanks! What can I help you with?"),
      ("I'm going to {d} next week and I'll need data there.", "Roaming data is available as an add-on on the {x} plan.")],
     [("I have a {x} plan from Telvo Mobile and I'm traveling to {d} next week.", "You can add a roaming data pack to your {x} plan.")]],
  F=["how much is it?", "what does that add-on cost?", "how much would that cost me?"],
  FD=[["how do I turn it on?"], ["how much data does it include?"], ["how much is it for two weeks?"]])

S("support",
  X=["family box", "veggie box", "two-person box"],
  D=["next week", "the first week of August"],
  H=[[("I get the {x} from Tavvy Meals every week.", "Great, I can see your {x} subscription."),
      ("I'll be away {d}.", "Okay, thanks for letting me know.")],
     [("I'm subscribed to the weekly Tavvy Meals {x}, and I'm traveling {d}.", "Thanks, I've found your {x} subscription.")]],
  F=["skip that delivery", "can you skip it for that week?", "please skip the box that week"],
  FD=[["cancel the subscription"], ["send it to my neighbor instead"], ["deliver it a day early instead"]])

S("coding",
  X=[{"x": "KeyError: 'name'", "m": "you're reading a dict key that doesn't exist"},
     {"x": "TypeError: 'NoneType' object is not subscriptable", "m": "you're indexing into something that is None"},
     {"x": "IndexError: list index out of range", "m": "you're reading past the end of a list"}],
  D=["read the JSON config file", "loop over the API results"],
  H=[[("I'm getting `{x}` in my Python script.", "That error usually means {m}."),
      ("It happens on the line where I {d}.", "Thanks, that narrows it down.")],
     [("My Python script throws `{x}` when I {d}.", "That usually means {m}.")]],
  F=["how do I fix it?", "what's the fix?", "how can I fix this?"],
  FD=[["what does it mean?"], ["how do I ignore it?"], ["how do I log it?"]])

S("travel",
  X=["Copenhagen", "Lisbon", "Vienna", "Dublin"],
  D=["August", "December"],
  H=[[("We're a family of four going to {x}.", "Fun! When are you going?"),
      ("In {d}.", "Great, {x} is lovely then.")],
     [("My family of four is visiting {x} in {d}.", "That sounds like a great trip!")]],
  F=["what should we do there?", "any suggestions for things to do?", "what activities would you recommend there?"],
  FD=[["where should we stay?"], ["what should we eat there?"], ["what should we do there on a rainy day?"]])

S("health",
  X=["headache"],
  D=[{"d": "two hours", "s": "No, just the headache"}, {"d": "three weeks", "s": "No, just the headache"},
     {"d": "two hours", "s": "Yes, my neck is stiff and I have a fever"},
     {"d": "three weeks", "s": "Yes, my vision has gone blurry in one eye"}],
  H=[[("I've had a {x} for {d}.", "Sorry to hear that. Any other symptoms?"),
      ("{s}.", "Thanks, that's useful to know.")],
     [("My head has been hurting for {d}.", "I'm sorry. Anything else going on?"),
      ("{s}.", "Okay, noted.")]],
  F=["should I see a doctor?", "do I need to see a doctor about it?", "is it worth going to the doctor?"],
  FD=[["what can I take for it?"], ["should I go to the ER right now?"]])

S("finance",
  X=["savings"],
  D=[{"a": "$5,000", "d": "25"}, {"a": "$50,000", "d": "25"}, {"a": "$50,000", "d": "60"}],
  H=[[("I have {a} sitting in my savings account.", "Nice. Are you thinking of investing it?"),
      ("Yes. I'm {d} and won't need it for a while.", "Okay, that helps.")],
     [("I'm {d} and I've got {a} in {x} that I won't need for a while.", "Good position to be in.")]],
  F=["where should I put it?", "how should I invest it?", "what would you do with it?"],
  FD=[["how much should I keep as cash?"], ["should I pay off my student loan instead?"]])

S("education",
  X=["German", "Japanese", "Italian"],
  D=["beginner", "advanced"],
  H=[[("I'm learning {x}.", "That's great! What level are you at?"),
      ("I'm at {d} level.", "Good to know.")],
     [("I'm learning {x} and I'm at {d} level.", "Nice, keep it up!")]],
  F=["what should I read?", "any book recommendations?", "what books would you suggest?"],
  FD=[["what podcasts should I listen to?"], ["what apps should I use?"], ["what should I read to learn grammar?"]])

S("home",
  X=["fridge", "air conditioner", "freezer"],
  D=["2 years old", "15 years old"],
  H=[[("My {x} isn't cooling properly.", "That's annoying. How old is it?"),
      ("About {d}.", "Okay, thanks.")],
     [("My {x} has stopped cooling well, and it's about {d}.", "Sorry to hear that.")]],
  F=["should I repair it or replace it?", "is it worth repairing or should I just buy a new one?", "repair or replace?"],
  FD=[["how much would a repair cost?"], ["can I fix it myself?"]])

S("pets",
  X=["dog", "cat", "rabbit"],
  D=["We just switched to a new food", "We just moved to a new house"],
  H=[[("My {x} has been scratching a lot.", "Poor thing! Has anything changed recently?"),
      ("{d}.", "That could be relevant.")],
     [("My {x} keeps scratching itself.", "Oh no. Any recent changes?"),
      ("{d}.", "Thanks, good to know.")]],
  F=["what could be causing it?", "why is it doing that?", "what might be the reason?"],
  FD=[["how can I stop it?"], ["should I take it to the vet?"]])

S("shopping",
  X=["video editing", "college note-taking", "gaming"],
  D=["$600", "$2,000"],
  H=[[("I'm buying a laptop mostly for {x}.", "Good to know. What's your budget?"),
      ("Around {d}.", "Okay, that gives us a range.")],
     [("I need a laptop for {x} and my budget is about {d}.", "Got it.")]],
  F=["which one should I get?", "what would you recommend?", "what's the best option for me?"],
  FD=[["should I wait for a sale?"], ["should I get an extended warranty?"]])

S("geography",
  X=[{"x": "Florence", "t": "Pisa"}, {"x": "Florence", "t": "Siena"}, {"x": "Tokyo", "t": "Nikko"},
     {"x": "Tokyo", "t": "Kamakura"}, {"x": "Edinburgh", "t": "St Andrews"}],
  H=[[("I'm staying in {x} for a week.", "Lovely! Any plans?"),
      ("I want to do a day trip to {t}.", "{t} is a popular day trip from {x}.")],
     [("During my week in {x} I'm thinking of a day trip to {t}.", "Good idea, lots of people visit {t} from {x}.")]],
  F=["how far is it?", "what's the distance?", "how many kilometers away is it?"],
  FD=[["how long does the train take?"], ["is it worth it?"], ["what should I see there?"]])


# ================================================================ padding
GREET_PREFIX = ["Hi! ", "Hello. ", "Hey there! ", "Good morning! ", "Hi, hope you're well. ",
                "Hello, quick question. ", "Hey! Quick one. ", "Good evening. "]
FILLER_PREFIX = ["So, ", "Um, ", "Okay so, ", "Hmm, "]
FILLER_OK_FIRST = {"what", "how", "can", "is", "tell", "write", "where", "which", "when", "should",
                   "any", "my", "the", "this", "next", "last", "lately", "for", "consider", "first",
                   "lots", "visiting", "tonight", "we're", "oops", "in", "something's"}
GREET_EXCHANGE = [("hi", "Hello! How can I help you today?"),
                  ("hello there", "Hi! What can I do for you?"),
                  ("hey, are you there?", "Yes, I'm here! How can I help?"),
                  ("good evening", "Good evening! What can I help you with?"),
                  ("hi, I have a couple of questions", "Of course, ask away!")]
UNRELATED = [("What's the time difference between London and New York?", "New York is usually 5 hours behind London."),
             ("Can you recommend a good science podcast?", "Sure, 'Radiolab' is a popular pick."),
             ("How many fluid ounces are in a cup?", "There are 8 fluid ounces in a US cup."),
             ("What's a synonym for 'happy'?", "'Cheerful' or 'content' both work well."),
             ("What's 15% of 80?", "15% of 80 is 12."),
             ("Who wrote Pride and Prejudice?", "Jane Austen wrote it; it was published in 1813."),
             ("How do I spell 'necessary'?", "It's spelled n-e-c-e-s-s-a-r-y."),
             ("What's the boiling point of water in Fahrenheit?", "It's 212°F at sea level."),
             ("Can you suggest a name for a goldfish?", "How about 'Bubbles' or 'Captain Fin'?"),
             ("How many days are in a leap year?", "A leap year has 366 days."),
             ("What's the plural of 'cactus'?", "Both 'cacti' and 'cactuses' are accepted."),
             ("Remind me, what's the speed of light?", "About 300,000 km per second.")]
THANKS_EXCHANGE = [("thanks, that's helpful", "You're welcome! Anything else?"),
                   ("ok great, thank you", "Happy to help!"),
                   ("cool, thanks", "No problem!"),
                   ("got it, thanks a lot", "You're welcome - let me know if you have more questions."),
                   ("perfect, appreciate it", "Anytime!")]
FU_PREFIX = ["Thanks. ", "Great, thanks! ", "Ok, got it. ", "Perfect. ", "Alright, thanks. ", "Okay. ",
             "Thanks for that. One more thing: ", "Cool. "]
FU_SUFFIX = [" Thanks!", " Thank you.", " Cheers.", " Thanks in advance."]
SYSTEM = ["You are a helpful assistant.", "You are a concise, friendly AI assistant.",
          "Answer the user's questions accurately and briefly.", "You are a helpful support assistant."]

MAX_MSGS = 7
MAX_USER = 3  # the condenser keeps the last 3 user turns


def n_user(msgs):
    return sum(m["role"] == "user" for m in msgs)


def condense(msgs):
    users = [m["content"] for m in msgs if m["role"] == "user"]
    return " | ".join(users[-MAX_USER:])


def cap(s):
    return s[:1].upper() + s[1:]


def cap_sentences(s):
    s = cap(s)
    return re.sub(r"([.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), s)


def first_user_idx(msgs):
    return next(i for i, m in enumerate(msgs) if m["role"] == "user")


def copy(msgs):
    return [dict(m) for m in msgs]


def pad_greet_prefix(msgs, rng):
    m = copy(msgs)
    i = first_user_idx(m)
    if i == len(m) - 1:
        return None
    m[i]["content"] = rng.choice(GREET_PREFIX) + m[i]["content"]
    return m


def pad_filler(msgs, rng):
    m = copy(msgs)
    i = first_user_idx(m)
    if i == len(m) - 1:
        return None
    c = m[i]["content"]
    if c.split()[0].lower() not in FILLER_OK_FIRST:
        return None
    m[i]["content"] = rng.choice(FILLER_PREFIX) + c[:1].lower() + c[1:]
    return m


def _prepend(msgs, pair):
    m = copy(msgs)
    i = first_user_idx(m)
    return m[:i] + [{"role": "user", "content": pair[0]}, {"role": "assistant", "content": pair[1]}] + m[i:]


def pad_greet_exchange(msgs, rng):
    return _prepend(msgs, rng.choice(GREET_EXCHANGE))


def pad_unrelated(msgs, rng):
    return _prepend(msgs, rng.choice(UNRELATED))


def pad_thanks(msgs, rng):
    m = copy(msgs)
    u, a = rng.choice(THANKS_EXCHANGE)
    return m[:-1] + [{"role": "user", "content": u}, {"role": "assistant", "content": a}] + m[-1:]


def pad_fu_prefix(msgs, rng):
    m = copy(msgs)
    pre, c = rng.choice(FU_PREFIX), m[-1]["content"]
    if pre.endswith((". ", "! ")) and rng.random() < 0.6:
        c = cap(c)
    m[-1]["content"] = pre + c
    return m


def pad_fu_suffix(msgs, rng):
    m = copy(msgs)
    c = m[-1]["content"]
    if c[-1] not in "?!.":
        c += "."
    m[-1]["content"] = c + rng.choice(FU_SUFFIX)
    return m


PADS = [pad_greet_prefix, pad_filler, pad_greet_exchange, pad_unrelated, pad_thanks, pad_fu_prefix, pad_fu_suffix]
LIGHT_PADS = [pad_greet_prefix, pad_fu_prefix, pad_fu_suffix]


def ok_shape(msgs):
    return (msgs is not None and 2 <= len(msgs) <= MAX_MSGS and n_user(msgs) <= MAX_USER
            and msgs[-1]["role"] == "user")


def pad(msgs, rng, pool=PADS, k=None):
    """Apply 1-2 padding operations; keep every history user turn inside the
    condensed window and change the condensed text."""
    k = k or rng.choice([1, 1, 2])
    for _ in range(20):
        ops = rng.sample(pool, k)
        if pad_greet_prefix in ops and pad_greet_exchange in ops:
            continue
        m = msgs
        for op in ops:
            m = op(m, rng) if m is not None else None
        if ok_shape(m) and condense(m) != condense(msgs):
            return m
    return None


def add_system(msgs, rng):
    if msgs[0]["role"] == "system" or len(msgs) >= MAX_MSGS:
        return msgs
    return [{"role": "system", "content": rng.choice(SYSTEM)}] + copy(msgs)


# ============================================================== building
def build(sc, v, xi, di, fu):
    slots = {**sc["X"][xi], **sc["D"][di]}
    msgs = []
    for u, a in sc["H"][v]:
        msgs.append({"role": "user", "content": u.format(**slots)})
        msgs.append({"role": "assistant", "content": cap_sentences(a.format(**slots))})
    msgs.append({"role": "user", "content": fu})
    return msgs


def other(rng, n, i):
    return rng.choice([j for j in range(n) if j != i])


def make_pair(sc, kind, rng):
    nx, nd, nv, nf = len(sc["X"]), len(sc["D"]), len(sc["H"]), len(sc["F"])
    xi, di, v, fi = rng.randrange(nx), rng.randrange(nd), rng.randrange(nv), rng.randrange(nf)
    a = build(sc, v, xi, di, sc["F"][fi])
    parts = kind.split("+")
    if parts[0] in ("reworded_history", "padded_history", "reworded_followup"):
        v2 = other(rng, nv, v) if "reworded_history" in parts else v
        f2 = other(rng, nf, fi) if "reworded_followup" in parts else fi
        b = build(sc, v2, xi, di, sc["F"][f2])
        if "padded_history" in parts:
            b = pad(b, rng)
        label = 1
    elif kind == "different_referent":
        v2 = other(rng, nv, v) if rng.random() < 0.25 else v
        f2 = other(rng, nf, fi) if rng.random() < 0.15 else fi
        b = build(sc, v2, other(rng, nx, xi), di, sc["F"][f2])
        label = 0
    elif kind == "different_detail":
        v2 = other(rng, nv, v) if rng.random() < 0.2 else v
        f2 = other(rng, nf, fi) if rng.random() < 0.15 else fi
        b = build(sc, v2, xi, other(rng, nd, di), sc["F"][f2])
        label = 0
    elif kind == "different_followup":
        b = build(sc, v, xi, di, rng.choice(rng.choice(sc["FD"])))
        label = 0
    else:
        raise ValueError(kind)
    if b is None:
        return None
    if label == 0 and rng.random() < 0.2:  # light surface noise on negatives too
        b = pad(b, rng, pool=LIGHT_PADS, k=1) or b
    if rng.random() < 0.12:
        a = add_system(a, rng)
    if rng.random() < 0.12:
        b = add_system(b, rng)
    if rng.random() < 0.5:
        a, b = b, a
    return {"a": a, "b": b, "label": label, "kind": kind}


POS_KINDS = ["reworded_history", "padded_history", "reworded_followup",
             "reworded_history", "padded_history", "reworded_followup"]
POS_COMBOS = ["reworded_history+reworded_followup", "padded_history+reworded_followup",
              "reworded_history+padded_history"]
PER_SIDE = 7


def generate():
    rng = random.Random(0)
    seen = {}
    rows = []
    for sc in SCEN:
        neg_kinds = []
        if len(sc["D"]) > 1:
            neg_kinds.append("different_detail")
        if len(sc["X"]) > 1:
            neg_kinds.append("different_referent")
        if sc["FD"]:
            neg_kinds.append("different_followup")
        plan = POS_KINDS + [rng.choice(POS_COMBOS)]
        plan = plan[:PER_SIDE]
        plan += [neg_kinds[i % len(neg_kinds)] for i in range(PER_SIDE)]
        for kind in plan:
            for _ in range(30):
                p = make_pair(sc, kind, rng)
                if p is None:
                    continue
                ca, cb = condense(p["a"]), condense(p["b"])
                if ca == cb:
                    continue
                key = tuple(sorted((ca, cb)))
                if key in seen:
                    continue
                seen[key] = p["label"]
                rows.append(p)
                break
    rng.shuffle(rows)
    return rows


def validate(rows):
    from collections import Counter
    keys = set()
    for r in rows:
        assert r["label"] in (0, 1)
        for side in ("a", "b"):
            m = r[side]
            assert 2 <= len(m) <= MAX_MSGS, (len(m), m)
            assert m[-1]["role"] == "user"
            assert all(x["role"] in ("user", "assistant", "system") and x["content"].strip() for x in m)
            assert all(x["role"] != "system" for x in m[1:])
        key = tuple(sorted((condense(r["a"]), condense(r["b"]))))
        assert key[0] != key[1]
        assert key not in keys, key
        keys.add(key)
    print("pairs:", len(rows))
    print("labels:", dict(Counter(r["label"] for r in rows)))
    for k, c in sorted(Counter(r["kind"] for r in rows).items()):
        print(f"  {k:45s} {c}")


if __name__ == "__main__":
    rows = generate()
    validate(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print("scenarios:", len(SCEN), "->", OUT)
