import { render } from 'preact';
import { App } from './app';
import { live } from './live/store';
import './styles.css';

// The event stream and the device list are asked for beside the session check, not after it.
live.begin();
render(<App />, document.getElementById('app')!);
