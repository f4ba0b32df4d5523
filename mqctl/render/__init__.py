"""Turn models into text. Only render/table.py imports rich."""
