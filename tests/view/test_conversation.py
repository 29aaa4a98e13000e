"""The conversation first (issue 48): harness entries hidden behind a count, Markdown rendered safely,
code highlighted, long outputs folded with their size."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.viewer import open_page, severe, wait_for
from waybook import JsonlJournal, Session
from waybook.cli import main
from waybook.model import ToolCallBlock
from waybook.view._markdown import render_markdown, safe_link

HOSTILE_MARKDOWN = """Here is the fix:

```python
def answer(x):
    return "<b>" + x  # not HTML
```

[run me](javascript:window.pwned=1) [data](data:text/html,<script>window.pwned=1</script>)
[a file](file:///etc/passwd) [docs](https://example.com/docs) [top](#n=abc)
<img src=x onerror="window.pwned=1"> <script>window.pwned=1</script> ![pixel](https://example.com/p.png)
&lt;b&gt; stays as typed
"""


def test_markdown_keeps_only_http_links_and_anchors_and_escapes_raw_html() -> None:
    html = render_markdown(HOSTILE_MARKDOWN)
    assert '<a href="https://example.com/docs">docs</a>' in html
    assert '<a href="#n=abc">top</a>' in html
    assert "[run me](javascript:window.pwned=1)" in html  # the text as typed, no link
    for refused in ('href="javascript', 'href="data', 'href="file', "<img", "<script"):
        assert refused not in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert "&amp;lt;b&amp;gt; stays as typed" in html  # an entity shows as typed, not decoded
    assert '<span class="hl-k">def</span>' in html  # highlighted by Pygments
    assert "&lt;b&gt;" in html.split("<pre>")[1]  # the code's own "<b>" is text


def test_a_link_is_kept_only_to_http_https_or_an_anchor() -> None:
    for url in ("https://x.example/a?b=c", "HTTP://x.example", "#n=1"):
        assert safe_link(url), url
    for url in (
        "javascript:alert(1)",
        "JaVaScRiPt:x",
        "data:text/html,x",
        "file:///etc",
        "/etc/passwd",
        "vbscript:x",
        "http://x\nonload",
        "//evil.example",
        "mailto:a@b",
    ):
        assert not safe_link(url), url


def test_underscores_stay_as_typed_and_asterisks_emphasise() -> None:
    html = render_markdown("call __init__ on my_var_name, not _this_; **this** and *that*")
    assert html == (
        "<p>call __init__ on my_var_name, not _this_; <strong>this</strong> and <em>that</em></p>\n"
    )


def test_a_code_block_in_an_unknown_language_is_shown_plain() -> None:
    html = render_markdown("```no-such-language\n<b>x</b>\n```\n")
    assert html == '<pre><code class="language-no-such-language">&lt;b&gt;x&lt;/b&gt;\n</code></pre>\n'


def harnessed_session(path: Path) -> dict[str, str]:
    """A session as Claude Code writes one: progress lines and a hook between the conversation's turns,
    a Markdown answer with a hostile link, and a tool output of 500 lines."""
    session = Session.create(JsonlJournal(path), journal_id="harnessed")
    question = session.user("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    session.user("What does **this** do?\nSecond line as typed.")
    session.custom("claude_code.progress", {"type": "hook_progress", "n": 1})
    session.custom("claude_code.progress", {"type": "hook_progress", "n": 2})
    call = session.assistant(
        [ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "seq 500"})], stop_reason="tool_use"
    )
    session.tool_result("c1", "".join(f"line {n}\n" for n in range(1, 501)), tool_name="bash")
    session.custom("claude_code.system.stop_hook_summary", {"hooks": 1})
    answer = session.assistant(HOSTILE_MARKDOWN)
    session.journal.close()
    return {"question": question.id, "call": call.id, "answer": answer.id}


def test_in_a_browser_harness_entries_are_hidden_behind_a_count_and_shown_on_request(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    ids = harnessed_session(tmp_path / "s.jsonl")
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    open_page(browser, (tmp_path / "s.html").as_uri())
    assert browser.find_element(By.ID, "harness-count").text == "4 harness entries hidden"
    conversation = browser.find_element(By.ID, "conversation")
    assert browser.find_elements(By.CSS_SELECTOR, "article.harness") == []
    assert "hook_progress" not in conversation.text
    runs = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "button.harness-run")]
    assert runs == [
        "1 harness entry hidden (1 command)",
        "2 harness entries hidden (2 progress)",
        "1 harness entry hidden (1 hook)",
    ]
    assert browser.find_element(By.ID, "title").text.startswith("What does **this** do?")  # not the command

    browser.find_element(By.ID, "harness-toggle").click()
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.find_element(By.ID, "harness-count").text == "4 harness entries shown"
    assert len(browser.find_elements(By.CSS_SELECTOR, "article.harness")) == 4
    assert browser.find_elements(By.CSS_SELECTOR, "button.harness-run") == []
    shown = browser.find_element(By.ID, "conversation").text.lower()
    assert shown.count("custom: claude_code.progress (harness: progress)") == 2
    assert browser.find_element(By.ID, f"n-{ids['question']}").is_displayed()
    assert severe(browser) == []


def test_in_a_browser_markdown_renders_with_its_code_highlighted_and_its_hostile_links_inert(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    ids = harnessed_session(tmp_path / "s.jsonl")
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri())
    answer = browser.find_element(By.ID, f"n-{ids['answer']}")
    keywords = answer.find_elements(By.CSS_SELECTOR, ".md pre code.language-python span.hl-k")
    assert [k.text for k in keywords] == ["def", "return"]
    code = answer.find_element(By.CSS_SELECTOR, ".md pre code").text
    assert code.startswith('def answer(x):\n    return "<b>"')
    hrefs = [a.get_attribute("href") for a in answer.find_elements(By.CSS_SELECTOR, ".md a")]
    anchor = (tmp_path / "s.html").as_uri() + "#n=abc"
    assert hrefs == ["https://example.com/docs", anchor, "https://example.com/p.png"]
    text = answer.text
    assert "[run me](javascript:window.pwned=1)" in text
    assert '<img src=x onerror="window.pwned=1"> <script>window.pwned=1</script>' in text
    assert "&lt;b&gt; stays as typed" in text
    assert answer.find_elements(By.CSS_SELECTOR, "img, script, iframe, [onerror], [style]") == []
    assert browser.execute_script("return window.pwned") is None
    question = browser.find_element(By.CSS_SELECTOR, "article.role-user .md")
    assert question.find_element(By.TAG_NAME, "strong").text == "this"
    assert question.text == "What does this do?\nSecond line as typed."  # a user's newline is kept
    assert severe(browser) == []


def test_in_a_browser_a_long_tool_output_is_folded_with_its_size(tmp_path: Path, browser: object) -> None:
    from selenium.webdriver.common.by import By

    harnessed_session(tmp_path / "s.jsonl")
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri())
    call = browser.find_element(By.CSS_SELECTOR, "details.tool-call")
    call.find_element(By.TAG_NAME, "summary").click()
    result = call.find_element(By.CSS_SELECTOR, ".tool-result .folded")
    output = result.find_element(By.TAG_NAME, "pre")
    assert output.text.splitlines() == [f"line {n}" for n in range(1, 13)]
    unfold = result.find_element(By.CSS_SELECTOR, "button.unfold")
    assert unfold.text == "show all 500 lines (4.3 KB)"
    unfold.click()
    assert output.text.splitlines()[-1] == "line 500"
    assert unfold.text == "fold (500 lines)"


def test_in_a_browser_the_page_keeps_only_the_markup_markdown_makes_whatever_html_it_is_given(
    tmp_path: Path, browser: object
) -> None:
    """Defence in depth: were the Python renderer to let HTML through, the page's allowlist drops it."""
    harnessed_session(tmp_path / "s.jsonl")
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri())
    cleaned = browser.execute_script(
        "return Waybook.markdown(arguments[0]).innerHTML",
        '<p onclick="window.pwned=1" style="color:red">hi <a href="javascript:window.pwned=1">js</a>'
        ' <a href="https://example.com" onmouseover="window.pwned=1">ok</a> <a href="data:text/html,x">d</a>'
        '<img src=x onerror="window.pwned=1"><svg onload="window.pwned=1"><circle/></svg>'
        '<iframe src="https://example.com"></iframe><script>window.pwned=1</script><style>*{}</style>'
        '<!-- a comment --><code class="language-py evil">c</code><span class="hl-k">k</span>'
        '<span class="x">s</span><form action="https://example.com"><input name=q></form></p>',
    )
    assert cleaned == (
        '<p>hi <a rel="noopener noreferrer nofollow">js</a>'
        ' <a href="https://example.com" rel="noopener noreferrer nofollow" target="_blank">ok</a>'
        ' <a rel="noopener noreferrer nofollow">d</a>'
        "window.pwned=1*{}<code>c</code>"
        '<span class="hl-k">k</span><span>s</span></p><p></p>'  # the parser closed the <p> at the <form>
    )
    assert browser.execute_script("return window.pwned") is None
    # The page's CSP refused the handlers and the style even in the inert template, as it says:
    assert all(e["source"] == "security" and "blocked" in e["message"] for e in severe(browser))
