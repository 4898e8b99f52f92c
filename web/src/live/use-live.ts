import { useEffect, useState } from 'preact/hooks';
import { live } from './store';

/** Re-renders the calling component whenever the live store changes; coalesced to one render per frame. */
export function useLive(): typeof live {
  const [, setVersion] = useState(live.version);
  useEffect(() => {
    let frame = 0;
    const unsubscribe = live.subscribe(() => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setVersion(live.version);
      });
    });
    return () => {
      unsubscribe();
      cancelAnimationFrame(frame);
    };
  }, []);
  return live;
}
