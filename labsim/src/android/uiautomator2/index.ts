export { UIA2_INSTRUMENTATION, UIA2_PORT, UIA2_SERVER_PACKAGE, UiAutomator2Server, uiautomator2Program, type Uia2Host } from './server';
