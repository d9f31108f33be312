"""Text that is safe to print: redact.py keeps passwords out of every output, untrusted.py
keeps terminal controls from the database out of the terminal."""
