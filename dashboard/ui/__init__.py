"""The Textual dashboard (and its web page): the only package that imports textual."""
