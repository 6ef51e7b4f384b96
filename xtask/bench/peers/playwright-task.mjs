// playwright-task.mjs — the Playwright peer of `cargo xtask bench web`.
//
// Usage: node playwright-task.mjs <task> <url>
//
// One invocation solves one task the way a Playwright user writes it: launch
// a fresh headless Chromium, open the page, act through role/label/test-id
// locators (which auto-wait), wait until the result element reads "done"
// (what `expect(locator).toHaveText("done")` does), print it, and close the
// browser. Exit 0 when solved, 1 otherwise. The bench copies this file next
// to its node_modules (the peer cache) so that `playwright-core` resolves.
import { chromium } from "playwright-core";

const [task, url] = process.argv.slice(2);

/** The actions of each task, by task name (the page file's stem). */
const tasks = {
  "click-button": async (page) => {
    await page.getByRole("button", { name: "Submit" }).click();
  },
  "enter-text": async (page) => {
    await page.getByLabel("Name").fill("Ada Lovelace");
    await page.getByRole("button", { name: "Submit" }).click();
  },
  "focus-text": async (page) => {
    await page.getByLabel("Answer").click();
  },
  "click-checkboxes": async (page) => {
    await page.getByRole("checkbox", { name: "Apple" }).check();
    await page.getByRole("checkbox", { name: "Cherry" }).check();
    await page.getByRole("button", { name: "Submit" }).click();
  },
  "click-link": async (page) => {
    await page.getByRole("link", { name: "dolor" }).click();
  },
  "click-collapsible": async (page) => {
    await page.getByRole("button", { name: "Section 1" }).click();
    await page.getByRole("button", { name: "Submit" }).click();
  },
  "login-user": async (page) => {
    await page.getByLabel("Username").fill("kanye");
    await page.getByLabel("Password").fill("abc123");
    await page.getByRole("button", { name: "Log in" }).click();
  },
  "click-dialog": async (page) => {
    await page.getByRole("button", { name: "Close" }).click();
  },
  "form-wizard": async (page) => {
    await page.getByLabel("Full name").fill("Ada Lovelace");
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByLabel("Plan").selectOption({ label: "Pro" });
    await page.getByRole("radio", { name: "Yearly" }).check();
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByRole("checkbox", { name: "I accept the terms" }).check();
    await page.getByRole("button", { name: "Create account" }).click();
  },
};

if (!tasks[task] || !url) {
  console.error(`usage: node playwright-task.mjs <${Object.keys(tasks).join("|")}> <url>`);
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROME || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox"],
});
let ok = false;
try {
  const page = await browser.newPage();
  await page.goto(url);
  await tasks[task](page);
  const result = page.getByTestId("result");
  await result.filter({ hasText: /^done$/ }).waitFor({ timeout: 10_000 });
  const text = (await result.textContent()).trim();
  console.log(`${task}: ${text}`);
  ok = text === "done";
} catch (e) {
  console.error(`${task}: ${e.message}`);
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
