"""Prompts both model parity tests use: varied scripts, code, whitespace runs, and two chats."""

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "Les élèves ont étudié l'histoire de la Révolution française et",
    "   Whitespace   runs\n\n\tand tabs, numbers 12345 and 3.14159, symbols @#$%",
    "東京は日本の首都です。 Emoji 🚀✨ and more:",
]
CHAT = [
    [{"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "system", "content": "You answer in one word."}, {"role": "user", "content": "Name a fruit."}],
]
