// The `sample` fields an Android device reports (spec 2.5, design.md names): what the metrics benchmarks write.
export const SAMPLE_FIELDS = [
  'Wired', 'Used', 'Free', 'Active', 'Inactive', 'Bytes Out', 'Bytes In', 'Bytes Out Per Second', 'Bytes In Per Second',
  'Load', 'User Load', 'System Load', 'Errors Out', 'Dropped Out', 'Errors In', 'Dropped In', 'IO Wait Load', 'IRQ Load',
  'Frequency', 'Buffers', 'Cached', 'Active (anon)', 'Inactive (anon)', 'Active (file)', 'Inactive (file)',
  'User Total (HighTotal)', 'User Free (HighFree)', 'Kernel Total (LowTotal)', 'Kernel Free (LowFree)', 'AnonPages',
  'Mapped', 'Kernel Stack', 'Page Tables', 'Commit Limit', 'Committed_AS', 'Vmalloc Total', 'Vmalloc Used',
  'Vmalloc Chunk', 'Total frames rendered', 'Janky frames (count)', 'Janky frames (percent)', '90th percentile',
  '95th percentile', '99th percentile', 'Number Missed Vsync', 'Number High input latency', 'Number Slow UI thread',
  'Number Slow bitmap uploads', 'Number Slow issue draw commands', 'TextureCache Current', 'TextureCache Total',
  'LayerCache Current', 'LayerCache Total', 'RenderBufferCache Current', 'RenderBufferCache Total',
  'GradientCache Current', 'GradientCache Total', 'PathCache Current', 'PathCache Total', 'Total graphics memory',
];
