"""The one exception type that reaches the user as a single line."""


class UserError(Exception):
    """A failure the user can fix: printed as one line, exit code 2.

    The message says what went wrong and what to do about it.
    """
