"""The help screen (`?`): every key of the tables, the look-up and the confirmations; one
scrollbar at 80x24; a footer with the help's own keys."""

from __future__ import annotations

from helpers.pilot import run_app
from ui_snapshots import demo_spec, fixed_history

from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.help import HelpScreen, binding_rows, keys_text
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen


def fixed_app() -> QueuetopApp:
    return QueuetopApp(demo_spec(), None, poll=False, snapshots=fixed_history())


def run(body, size=(80, 24)):
    """`body(pilot, app)` on the fixed dashboard at `size`."""
    app = fixed_app()

    async def with_app(pilot):
        await body(pilot, app)

    run_app(app, with_app, size)


def keys_of(rows, section: str) -> dict[str, str]:
    return {keys: text for name, keys, text in rows if name == section}


def test_help_names_the_table_keys_the_look_up_keys_and_the_confirmation_keys():
    rows = binding_rows(fixed_app().binding_sections())
    tables = keys_of(rows, "tables")
    assert tables["Home End"] == "First row / last row"
    assert tables["Left Right"] == "Scroll sideways (wide columns)"
    assert {"Enter", "Up Down", "PgUp PgDn"} <= set(tables)

    look_up = keys_of(rows, "job look-up (j)")
    assert look_up["F"] == "Requeue even leases that have not expired"
    assert {"R", "D", "Enter", "Esc", "Esc q", "Home End"} <= set(look_up)
    # every key the look-up screens answer to is in the help, hidden scroll keys too
    named = {k for keys in look_up for k in keys.split()}
    for screen in (JobLookupScreen, JobListScreen):
        for binding in screen.BINDINGS:
            assert set(keys_text(binding.key).split()) <= named, binding.key

    confirm = keys_of(rows, "confirmations")
    assert set(confirm) == {keys_text(b.key) for b in ConfirmScreen.BINDINGS}
    assert "go back" in confirm["Esc n"]


def test_help_at_80x24_scrolls_in_one_place_and_its_footer_is_its_own():
    async def body(pilot, app):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        widgets = [app.screen, *app.screen.query("*")]
        assert [w for w in widgets if w.show_horizontal_scrollbar] == []
        assert [w.id for w in widgets if w.show_vertical_scrollbar] == ["help-body"]
        help_body = app.screen.query_one("#help-body")
        # the thumb is drawn in the accent colour, not the default that all but vanishes
        assert help_body.styles.scrollbar_color != app.screen.styles.scrollbar_color
        footer = [s.text for s in app.screen._compositor.render_strips()][-1]
        assert "Esc Close help" in footer and "Quit" not in footer, footer
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    run(body)


def test_every_key_in_the_help_is_shown_as_it_is_typed():
    # the help showed 'slash', 'right_square_bracket', 'left_square_bracket'
    rows = binding_rows(fixed_app().binding_sections())
    shown = {k for _, keys, _ in rows for k in keys.split()}
    assert {"/", "[", "]"} & shown, shown
    spelled = {k for k in shown if "_" in k or k in ("slash", "comma", "full_stop")}
    assert spelled == set(), spelled
