"""Text that is safe to print: redact.py keeps passwords out of every output."""
