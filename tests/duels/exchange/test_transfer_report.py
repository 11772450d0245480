"""import_transfer says which rows count towards the transfer figure, and why the others do not."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from duels.exchange.transfer import NEVER_PLAYED, ONE_CONDITION

pytestmark = pytest.mark.django_db
HEADER = "learner,environment,author,benchmark,before,after\n"


def run(path) -> str:
    out = io.StringIO()
    call_command("import_transfer", str(path), stdout=out)
    return out.getvalue()


def test_rows_kept_and_dropped_with_reasons(make, tmp_path):
    setter, learner = make.player(name="setter"), make.player(name="learner")
    duel = make.finished_duel(a=setter, b=learner)  # learner solves setter's env in both conditions
    unplayed = make.environment(author=setter)
    hinted_only = make.environment(author=setter)
    make.episode(environment=hinted_only, solver=learner, hint=make.hint(environment=hinted_only),
                 status="finished", success=True)
    path = tmp_path / "transfer.csv"
    path.write_text(
        HEADER
        + f"learner,{duel.env_a.uuid},,gsm8k,0.5,0.6\n"
        + f"learner,{unplayed.uuid},,gsm8k,0.5,0.7\n"
        + f"learner,{hinted_only.uuid},,gsm8k,0.5,0.55\n"
        + f"setter,{unplayed.uuid},,arc,0.1,0.2\n"
    )
    text = run(path)
    assert "imported 4 transfer results; 0 already present" in text
    assert "1 of 4 rows count towards the transfer figure" in text
    assert f"not counted (2): {NEVER_PLAYED}" in text
    assert f"not counted (1): {ONE_CONDITION}" in text
    assert "needs at least 3 counted rows" in text


def test_author_rows_pool_the_author_s_environments(make, tmp_path):
    setter, learner = make.player(name="setter"), make.player(name="learner")
    make.finished_duel(a=setter, b=learner)
    path = tmp_path / "transfer.csv"
    path.write_text(HEADER + "learner,,setter,gsm8k,0.5,0.6\n")
    assert "1 of 1 rows count" in run(path)


def test_a_file_without_header_row_says_what_the_header_is(make, tmp_path):
    make.player(name="learner")
    path = tmp_path / "transfer.csv"
    path.write_text("learner,,setter,gsm8k,0.5,0.6\n")
    with pytest.raises(CommandError) as caught:
        run(path)
    assert "The first line must be the header row learner,environment,author" in str(caught.value)


def test_a_cell_past_the_csv_field_limit_is_an_error_naming_its_line(make, tmp_path, client,
                                                                    admin_user):
    make.player(name="learner")
    huge = "x" * 131_073
    path = tmp_path / "transfer.csv"
    path.write_text(HEADER + "learner,,learner,gsm8k,0.5,0.6\n"
                    + f"learner,,learner,{huge},0.5,0.6\n")
    with pytest.raises(CommandError) as caught:
        run(path)
    assert "line 3" in str(caught.value) and "131,072 characters" in str(caught.value)
    assert "nothing was imported" in str(caught.value)
    client.force_login(admin_user)
    with path.open("rb") as upload:
        response = client.post("/import/", {"csv_file": upload})
    assert response.status_code == 400
    assert "131,072 characters" in response.content.decode()
