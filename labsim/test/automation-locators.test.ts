/**
 * The locators the simulated device-side servers evaluate, on trees as their screens build them: XPath (both
 * servers), UiSelector chains (UiAutomator2), predicate strings and class chains (WebDriverAgent).
 */
import type { UiNode } from '../src/android/screen';
import { findNodes } from '../src/android/uiautomator2/finder';
import { snapshot } from '../src/android/uiautomator2/tree';
import type { WdaNode } from '../src/ios/wda/xctest-screen';
import { findWdaNodes, wdaSnapshot } from '../src/ios/wda/wda-tree';
import { W3cError } from '../src/util/json-wire';

const ui = (className: string, text: string, extra: Partial<UiNode> = {}): UiNode => ({
  className, text, resourceId: '', contentDesc: '', packageName: 'com.example', bounds: [0, 0, 100, 100], clickable: false, focused: false, children: [], ...extra,
});
const android = snapshot(ui('android.widget.FrameLayout', '', {
  children: [
    ui('android.widget.TextView', 'Chrome', { clickable: true, contentDesc: 'Chrome', resourceId: 'com.example:id/icon' }),
    ui('android.widget.TextView', 'Camera', { clickable: true }),
    ui('android.widget.LinearLayout', '', { children: [ui('android.widget.EditText', 'hello', { resourceId: 'com.example:id/input' })] }),
  ],
}), 1080, 2400, 0);
const texts = (strategy: string, selector: string) => findNodes(android, strategy, selector, undefined, 'com.example').map((n) => n.ui.text || n.ui.className);

it('evaluates the XPath forms clients send', () => {
  expect(texts('xpath', '//*[@text="Chrome"]')).toEqual(['Chrome']);
  expect(texts('xpath', '//android.widget.TextView[2]')).toEqual(['Camera']);
  expect(texts('xpath', '//android.widget.TextView[last()]')).toEqual(['Camera']);
  expect(texts('xpath', "//*[contains(@text, 'Ca') and @clickable='true']")).toEqual(['Camera']);
  expect(texts('xpath', "//*[starts-with(@resource-id, 'com.example:id/')]")).toEqual(['Chrome', 'hello']);
  expect(texts('xpath', '/hierarchy/android.widget.FrameLayout/*[3]/android.widget.EditText')).toEqual(['hello']);
  expect(texts('xpath', '//android.widget.EditText/..')).toEqual(['android.widget.LinearLayout']);
  expect(texts('xpath', '//*[@text="Chrome"] | //*[@text="hello"]')).toEqual(['Chrome', 'hello']);
  // A position in a step counts among each parent's children; over the whole selection it needs parentheses.
  expect(texts('xpath', '//*[not(@text="")][count(*) = 0][position() = 1]')).toEqual(['Chrome', 'hello']);
  expect(texts('xpath', '(//*[not(@text="")][count(*) = 0])[1]')).toEqual(['Chrome']);
  expect(texts('xpath', '//*[@text="Chrome"]/@text')).toEqual([]);
  for (const bad of ['//*[', '//*[@text=]', 'foo(', '//*[unknown()]']) {
    expect(() => texts('xpath', bad)).toThrow(W3cError);
  }
});

it('evaluates UiSelector chains and the other UiAutomator2 strategies', () => {
  expect(texts('-android uiautomator', 'new UiSelector().text("Chrome")')).toEqual(['Chrome']);
  expect(texts('-android uiautomator', 'new UiSelector().className("android.widget.TextView").instance(1)')).toEqual(['Camera']);
  expect(texts('-android uiautomator', 'textStartsWith("C").clickable(true)')).toEqual(['Chrome', 'Camera']);
  expect(texts('-android uiautomator', 'new UiSelector().textMatches("Ch.*"); new UiSelector().resourceId("com.example:id/input")')).toEqual(['Chrome', 'hello']);
  expect(texts('-android uiautomator', 'new UiSelector().className("android.widget.LinearLayout").childSelector(new UiSelector().textContains("ell"))')).toEqual(['hello']);
  expect(texts('id', 'input')).toEqual(['hello']);
  expect(texts('accessibility id', 'Chrome')).toEqual(['Chrome']);
  expect(() => texts('-android uiautomator', 'new UiSelector().text(Chrome)')).toThrow(W3cError);
  // A pattern that could backtrack without end is refused, not run: the simulator has one thread.
  expect(() => texts('-android uiautomator', 'new UiSelector().textMatches("(a+)+$")')).toThrow(W3cError);
  expect(() => texts('css selector', 'x')).toThrow(W3cError);
});

const wda = (type: string, name: string | null, children: WdaNode[] = [], value: string | null = null): WdaNode => ({
  type, name, label: name, value, rect: [0, 0, 10, 10], enabled: true, accessible: !!name, children,
});
const ios = wdaSnapshot(wda('XCUIElementTypeApplication', ' ', [wda('XCUIElementTypeWindow', null, [
  wda('XCUIElementTypeIcon', 'Safari'), wda('XCUIElementTypeIcon', 'Settings'), wda('XCUIElementTypeOther', 'Group', [wda('XCUIElementTypeButton', 'OK', [], 'ok')]),
])]), 390, 844);
const names = (using: string, value: string) => findWdaNodes(ios, using, value).map((t) => t.node.name);

it('evaluates predicate strings and class chains as WebDriverAgent does', () => {
  expect(names('predicate string', 'type == "XCUIElementTypeIcon" AND name BEGINSWITH "Sa"')).toEqual(['Safari']);
  expect(names('predicate string', "label ==[c] 'settings' OR value CONTAINS 'o'")).toEqual(['Settings', 'OK']);
  expect(names('predicate string', 'NOT (type == "XCUIElementTypeIcon") AND name LIKE "G*p"')).toEqual(['Group']);
  expect(names('class chain', '**/XCUIElementTypeIcon')).toEqual(['Safari', 'Settings']);
  expect(names('class chain', '**/XCUIElementTypeIcon[-1]')).toEqual(['Settings']);
  expect(names('class chain', 'XCUIElementTypeWindow/XCUIElementTypeOther/XCUIElementTypeButton[`name == "OK"`]')).toEqual(['OK']);
  expect(names('xpath', '//XCUIElementTypeIcon[@name="Settings"]')).toEqual(['Settings']);
  expect(names('accessibility id', 'OK')).toEqual(['OK']);
  expect(() => names('predicate string', 'name ~= "x"')).toThrow(W3cError);
  expect(() => names('predicate string', 'name MATCHES "(a|aa)*b"')).toThrow(W3cError);
  expect(() => names('magic', 'x')).toThrow(W3cError);
});
