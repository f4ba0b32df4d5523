"""What the tests share, importable from every test folder (pytest puts tests/ on sys.path):
the in-memory backend (``memory_backend``), stores built byte by byte (``storebytes``,
``storeparse``, ``reset_stores``, ``watch_store``), the fake RocketMQ cluster (``fakemodel``,
``fakebodies``, ``fakecluster``, ``fakeserver``, ``live_scenario``) and small helpers (``cli``:
running mqctl in-process or as a process; the fixed clocks).
"""
