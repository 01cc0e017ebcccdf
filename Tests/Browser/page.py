"""Drives graphhost's page in Debian's Chromium (headless) through Selenium, for the browser tests
(Tests/GraphHostTests/Web/WebPageTests.swift runs the scenarios in scenarios.py with it)."""
import json
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

TIMEOUT = 20


def browser(width=1280, height=900):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},{height}",
                     "--disable-dev-shm-usage", "--hide-scrollbars"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    # The page's console (its errors, and the connection's opening and closing), for `console`.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def console(driver):
    """The page's console since the last call: one line per message, its level and its time on the wall clock."""
    try:
        entries = driver.get_log("browser")
    except Exception as error:
        return [f"(the console could not be read: {error})"]
    return [f"{time.strftime('%H:%M:%S', time.localtime(e['timestamp'] / 1000))}.{e['timestamp'] % 1000:03d} "
            f"{e['level']} {e['message']}" for e in entries]


def phone(driver, width=390, height=844):
    """Makes the page a phone's width (a headless window cannot be narrower than 500 px, so the device metrics are
    set instead; as a desktop viewport, so a page wider than the screen overflows it rather than being zoomed out)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def open_page(driver, url):
    """Opens the URL graphhost printed and waits until the page drew the graph."""
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === 'true'"), "the page drew the graph")


def wait(driver, condition, what, timeout=TIMEOUT):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.01).until(condition)
    except Exception as error:
        raise AssertionError(f"timed out waiting until {what}") from error


def graph(driver):
    return driver.execute_script("return window.graphhost.state.graph")


def select(driver, node):
    driver.find_element(By.CSS_SELECTOR, f'#graph-view .node[data-id="{node}"]').click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#node-controls h3"), f"{node}'s controls")


def report(**values):
    print(json.dumps(values), flush=True)


def now():
    return time.time()
