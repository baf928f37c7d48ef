// The experiments' parameters as a learner reads them: a short label in each language, keyed by
// the engine's flag (without "--"), and whether the form folds it under "More settings". The
// one-line help under each control is the engine's own help (lab.experiments()[i].parameters[j].help)
// in English and PARAMETERS_ZH (experiments_zh.ts) in Chinese; the flag stays beside the label.
// tests/wasm/experiments_zh.test.mjs fails when a parameter the engine lists has no label here.

export interface ParameterLabel {
  en: string;
  zh: string;
  /** Folded under "More settings": sizes of the measurement, not the knob the claim turns. */
  advanced?: true;
  /** Help for a parameter whose engine help only repeats its name ("task"). */
  help?: { en: string; zh: string };
}

export const PARAMETER_LABELS: Record<string, ParameterLabel> = {
  // every training experiment
  steps: { en: 'Training steps', zh: '训练步数' },
  batch: { en: 'Batch size', zh: '批大小', advanced: true },
  lr: { en: 'Learning rate', zh: '学习率', advanced: true },
  warmup: { en: 'Warm-up steps', zh: '预热步数', advanced: true },
  'log-every': { en: 'Curve point every', zh: '曲线点间隔', advanced: true },
  'eval-batches': { en: 'Evaluation batches', zh: '评估批次数', advanced: true },
  seed: { en: 'Random seed', zh: '随机种子', advanced: true },
  // §1 lstm
  distances: { en: 'Recall distances', zh: '回忆距离' },
  extra: { en: 'Scored positions', zh: '打分位置数', advanced: true },
  vocab: { en: 'Symbols', zh: '符号数', advanced: true },
  'd-model': { en: 'Model width', zh: '模型宽度' },
  'lstm-width': { en: 'LSTM width', zh: 'LSTM 宽度', advanced: true },
  // §2 scaling, tie-qk
  task: {
    en: 'Task',
    zh: '任务',
    help: { en: 'the sequence task the models learn (the lab describes each one)', zh: '模型要学习的序列任务（训练实验室里有每个任务的说明）' },
  },
  length: { en: 'Sequence length', zh: '序列长度' },
  layers: { en: 'Layers', zh: '层数' },
  heads: { en: 'Heads', zh: '头数' },
  ff: { en: 'Feed-forward width', zh: '前馈层宽度', advanced: true },
  'gradient-dims': { en: 'Head sizes of the gradient table', zh: '梯度表的 d_k', advanced: true },
  k: { en: 'Recall distance', zh: '回忆距离' },
  sequences: { en: 'Sequences analysed', zh: '分析的序列数', advanced: true },
  // §3 heads, cost, kv-heads
  'd-models': { en: 'Model widths', zh: '模型宽度' },
  repeats: { en: 'Timed calls', zh: '计时调用次数', advanced: true },
  'kv-heads': { en: 'Key/value heads', zh: '键/值头数' },
  'gen-tokens': { en: 'Generated tokens', zh: '生成的词元数', advanced: true },
  // §3 heads-real
  models: { en: 'Models folder', zh: '模型文件夹', advanced: true },
  data: { en: 'Data folder', zh: '数据文件夹', advanced: true },
  shipped: { en: 'Shipped models', zh: '随附模型' },
  poems: { en: 'Held-out poems', zh: '留出诗首数' },
  windows: { en: 'Held-out windows', zh: '留出窗口数' },
  threshold: { en: 'Label threshold', zh: '标签阈值' },
  examples: { en: 'Evidence rows per head', zh: '每个头的证据行数', advanced: true },
  // §4 positional, permutation
  'test-length': { en: 'Test length', zh: '测试长度' },
  pe: { en: 'Positional encodings', zh: '位置编码' },
  batches: { en: 'Sequences', zh: '序列数', advanced: true },
  tolerance: { en: 'Tolerance', zh: '容差', advanced: true },
  // §5 variants
  lengths: { en: 'Trained lengths', zh: '训练长度' },
  'timed-lengths': { en: 'Timed lengths', zh: '计时长度' },
  variants: { en: 'Attention variants', zh: '注意力变体' },
  window: { en: 'Window width', zh: '窗口宽度' },
  'block-size': { en: 'Block size', zh: '块大小' },
  'timed-batch': { en: 'Timed batch', zh: '计时批大小', advanced: true },
  // §5 induction
  depths: { en: 'Depths', zh: '层数' },
  'phase-window': { en: 'Phase-change window', zh: '相变窗口', advanced: true },
  // §6 mask, fp16
  samples: { en: 'Examples shown', zh: '展示的示例数', advanced: true },
  'gen-examples': { en: 'Prompts scored', zh: '评分的提示数', advanced: true },
  'score-scale': { en: 'Score scale', zh: '分数倍数' },
  softmax: { en: 'Softmax', zh: 'softmax 写法' },
  // §7 series
  context: { en: 'Context', zh: '上下文步数' },
  horizon: { en: 'Horizon', zh: '预测步数' },
  periods: { en: 'Periods', zh: '周期' },
  noise: { en: 'Noise', zh: '噪声' },
  drift: { en: 'Drift', zh: '漂移' },
  seeds: { en: 'Seeds', zh: '种子数' },
  // §9 importance
  model: { en: 'Real model too', zh: '同时比较的真实模型' },
  'real-sequences': { en: 'Real-model sequences', zh: '真实模型的序列数', advanced: true },
  // §9 normalizer, norm
  normalizers: { en: 'Normalisers', zh: '归一化方式' },
  clip: { en: 'Gradient clipping', zh: '梯度裁剪' },
};
