#!/usr/bin/python3
"""Keeps graphhost's page open in Debian's headless Chromium (Tests/Browser/page.py; Selenium is Debian's
python3-selenium, so this runs under /usr/bin/python3) for a script running under another Python, such as
scripts/bench. It reads commands a line at a time on standard input and answers each with a line:
`open URL` opens the page and waits until its feeds are drawn (meters, load, transport): `ready`; `blank` leaves it
for about:blank (the WebSocket closes): `blank`; end of input quits the browser. Chromium runs as this process's
descendants."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "Tests", "Browser"))
import page  # noqa: E402

FEEDS_DRAWN = ("return document.querySelectorAll('#meters .meter').length > 0"
               " && document.querySelectorAll('#load-table tbody tr').length > 0"
               " && document.querySelectorAll('#streams .stream').length > 0")


def main():
    driver = page.browser()
    try:
        print("started", flush=True)
        for line in sys.stdin:
            command, _, argument = line.strip().partition(" ")
            if command == "open":
                page.open_page(driver, argument)
                page.wait(driver, lambda d: d.execute_script(FEEDS_DRAWN), "the page shows its feeds")
                print("ready", flush=True)
            elif command == "blank":
                driver.get("about:blank")
                print("blank", flush=True)
            else:
                print(f"unknown command {command!r}", flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
