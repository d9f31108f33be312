"""Column conventions shared by the main screen's tables."""

QUERY_WIDTH = 28  # at least: the query column takes whatever width is left
R = "right"  # numbers and ages line up on their last digit
# dropped while the terminal is too narrow for every column, FIRST before LATER before
# the query (Enter still shows the whole row)
FIRST, LATER = {"drop": 3}, {"drop": 2}
QUERY = {"fill": True, "drop": 1}
