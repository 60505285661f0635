/** Headless Chromium as the report tests drive it (Debian's package; .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for a headless run on this closed network, with a fresh profile and a window `height` tall. */
export function chromiumArgs(profile: string, height: number): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    `--window-size=1280,${height}`,
  ];
}
