// 简体中文 for the experiments' fixed texts, which the engine's registry gives in English
// (lab.experiments(): claim, summary, parameter help), keyed by the engine's experiment name and
// parameter flag. The English page shows the engine's own text. What a run returns (conclusion,
// timing, tables, charts, notes) has its Chinese in results_zh.ts.
// tests/browser/chapters.test.mjs fails when an experiment the engine lists has no claim here.

export interface ExperimentZh {
  claim: string;
  summary: string;
}

export const EXPERIMENTS_ZH: Record<string, ExperimentZh> = {
  lstm: {
    claim: '§1.1/§5.1：LSTM 会遗忘长序列（长度 500）开头的内容；注意力能回忆任意距离的信息',
    summary: '在最远 500 的距离上做 k_back 回忆：参数量相近的 LSTM 与 Transformer 对比，以及每步耗时',
  },
  scaling: {
    claim: '§2.2：不除以 √d_k 时，大头维度的分数会使 softmax 饱和，其梯度消失，损失在数百步内几乎不动',
    summary: '一个大头，有无 1/√d_k：初始化时的饱和、softmax 梯度范数随 d_k 的变化、损失曲线',
  },
  'tie-qk': {
    claim: '§2.1：独立的 W_Q 和 W_K 比共享的一个矩阵表达力更强：Q = K 绑定时分数对称，无法表达不对称的关系',
    summary: '在 k_back 上比较独立的 W_Q、W_K 与绑定的 Q = K：准确率，以及落在自身与 t−k 上的权重',
  },
  heads: {
    claim: '§3.2/§3.3：固定 d_model 时头数是一种权衡；文章称 d_model 512 时 h = 8 最好，h = 16 欠拟合（每个头太窄）',
    summary: '在 d_model 512 和 64 上扫描头数 1..16：损失、准确率、每秒步数',
  },
  cost: {
    claim: '§3.2：多头注意力与一个全宽度的单头计算量相同（同样的乘加次数，只是拆成 h 个更小的矩阵乘）',
    summary: '固定 d_model 时，h = 1..16 的单层注意力：FLOPs 以及实测的前向/反向时间',
  },
  'kv-heads': {
    claim: '§3.3：MQA/GQA 让多个查询头共享键/值头：KV 缓存缩小 num_heads/num_kv_heads 倍，参数更少，质量损失很小',
    summary: 'MHA / GQA / MQA（num_kv_heads 为 4、2、1）：参数量、准确率、每个词元的 KV 缓存',
  },
  induction: {
    claim: '§5.2/§3.2：归纳头在一次相变中形成：2 层纯注意力模型在重复序列上的损失骤降，同时出现一个从上一次出现之后复制词元的头；1 层模型无法形成这样的头',
    summary: '在重复的随机词元上比较 1 层和 2 层纯注意力解码器：上下文损失、归纳分数',
  },
  positional: {
    claim: '§4.1/§4.3：没有位置信息时注意力分不清顺序（它是置换等变的）；可学习的位置表无法外推到训练长度之外，RoPE（相对位置）比绝对位置编码外推得更好',
    summary: '无 / 正弦 / 可学习 / RoPE：长度 L 和 2L 上的准确率，以及不带位置时的置换差距',
  },
  permutation: {
    claim: '§4.1：没有位置信息时注意力是置换等变的（“我爱你” = “你爱我”）：打乱输入后的输出等于打乱后的原输出；任何位置编码都会打破这一点',
    summary: '不加掩码时，比较 f(打乱的 x) 与 打乱的 f(x)，分别在无编码和每种编码下：最大差值',
  },
  variants: {
    claim: '§5.3：稀疏、滑动窗口和线性注意力把 O(n²) 的开销降向 O(n)，代价是无法触及的关系上准确率下降',
    summary: 'full / window / block_sparse / linear 随 n 增长：打分的查询-键对、注意力内存、时间、k_back 准确率（k = n/2）',
  },
  mask: {
    claim: '§6.1：没有因果掩码时训练损失会可疑地迅速下降（每个位置都看得到答案），而生成会失败；加了掩码、训练同样久的模型生成得很好',
    summary: '有无因果掩码的解码器：泄露答案的训练损失与生成出的答案',
  },
  fp16: {
    claim: '§6.3：分数变大后 fp16 的 softmax 会溢出（s > 11.09 时 exp(s) > 65504）；用 fp32 计算 softmax 即可修复；注意观察最大分数',
    summary: 'fp32 / fp16（fp16 softmax）/ fp16（fp32 softmax），从糟糕的初始化、以较高学习率训练：出错的步数与最大分数曲线',
  },
  series: {
    claim: '§7.2：在强周期序列上，LSTM 可能比注意力更稳定（不同随机种子之间误差的波动更小）',
    summary: '预测周期序列：Transformer（正弦、感知时间）vs LSTM vs 季节性朴素预测，跨多个种子',
  },
  normalizer: {
    claim: '§9.1：softmax 注意力比 sigmoid 或 ReLU 权重训练得更好（各个键竞争一份总和为 1 的预算）',
    summary: '同一个解码器分别用 softmax、sigmoid、relu 注意力权重：损失曲线、准确率、熵',
  },
  'heads-real': {
    claim: '§3.2：训练好的模型里，不同的头学到不同的模式（一个看前一个词，一个看第一个词元，一个看韵脚）；这里是随附的 tang 与 brown 模型在留出文本上的各个头',
    summary: '随附的 tang 与 brown 模型：每个头在留出文本上的检测器得分、各类头的数目、证据',
  },
  importance: {
    claim: '§9.2：注意力权重并不等于对应键的重要性：按权重给键排序，与按“删除它的影响”排序不同；权重·‖v‖ 更接近后者',
    summary: '训练好的解码器：按权重、按 权重·‖v‖、按删除效果给键排序，以及它们的秩相关',
  },
  norm: {
    claim: '§9.3：深层 Post-LN Transformer 不做学习率预热就不稳定；Pre-LN 不预热也能稳定训练',
    summary: '较高学习率下的深层 Pre-LN 与 Post-LN，有无预热：每组的损失与是否发散',
  },
};

/**
 * Parameter help lines by flag (without "--"), the engine's help in Chinese; the page shows it under
 * the control, the label (parameters.ts) and the flag above it. The training
 * flags every training experiment takes, then each experiment's own, in the order of the chapters.
 */
export const PARAMETERS_ZH: Record<string, string> = {
  // every training experiment
  steps: '每次运行的优化步数',
  batch: '每步的序列数',
  lr: '峰值学习率（AdamW，余弦衰减到 lr/10）',
  warmup: '线性预热步数',
  'log-every': '每隔 N 步记录一个曲线点',
  'eval-batches': '最终评估用的留出批次数',
  seed: '权重、数据与输入的随机种子（相同种子给出相同结果）',
  // §1 lstm
  distances: '回忆距离 k（逗号分隔）',
  extra: '每条序列的打分位置数（T = k + extra）',
  vocab: '任务所用的符号个数',
  'd-model': '模型宽度 C',
  'lstm-width': 'LSTM 宽度（0 = 与 Transformer 参数量相当）',
  // §2 scaling
  task: '任务',
  length: '每条序列的词元数（任务长度）',
  layers: 'Transformer 块数',
  heads: '注意力头数',
  ff: '每个块中前馈层的隐藏宽度',
  'gradient-dims': 'softmax 梯度表中的 d_k 取值',
  // §2 tie-qk
  k: 'k_back：要回忆的距离',
  sequences: '分析的留出序列数',
  // §3 heads
  'd-models': '要扫描的模型宽度（逗号分隔）',
  // §3 cost
  repeats: '每个头数计时的调用次数（取最好）',
  // §3 kv-heads
  'kv-heads': '要比较的键/值头数（heads 的因数）',
  'gen-tokens': '测 KV 缓存解码时生成的词元数',
  // §4 positional
  'test-length': '外推长度（0 = 2 × length）',
  pe: '要比较的位置编码',
  // §4 permutation
  batches: '序列数（每条有自己的打乱顺序）',
  tolerance: '视为相等的相对差距',
  // §5 variants
  lengths: '训练模型所用的序列长度 n',
  'timed-lengths': '给单层计时所用的序列长度 n',
  variants: '要比较的注意力变体（逗号分隔）',
  window: 'window 变体的窗口 W',
  'block-size': 'block_sparse 变体的块大小 b',
  'timed-batch': '计时层的序列数',
  // §5 induction
  depths: '要训练的每个纯注意力模型的层数（逗号分隔）',
  'phase-window': '一次骤降最多可以占用的训练步数比例',
  // §6 mask
  samples: '展示的生成示例数',
  'gen-examples': '用于评分生成答案的留出提示数',
  // §6 fp16
  'score-scale': '糟糕的初始化：分数乘以这个数而不是 1/√D',
  softmax: 'softmax 的写法：naive 直接计算 exp(s)/Σexp(s)（会溢出），stable 先减去每行最大值',
  // §7 series
  context: '模型读取的步数',
  horizon: '模型一次预测的未来步数',
  periods: '正弦波的周期（也是时间感知编码的周期），逗号分隔',
  noise: '噪声的标准差',
  drift: '一个样本内周期的相对增长',
  seeds: '随机种子数',
  // §3 heads-real
  models: '随附模型所在的文件夹（<name>.safetensors）',
  data: '留出文本所在的文件夹：splits/ 与 node_modules/（scripts/fetch_data.sh）',
  shipped: '要读取的随附模型（逗号分隔）',
  poems: 'tang：留出的诗首数',
  windows: 'brown：按上下文长度切出的留出窗口数',
  threshold: '一个头获得标签所需的最低得分',
  examples: '每个有标签的头展示的证据行数',
  // §9 importance
  model: 'none，或同时比较的一个随附模型（models/tang.safetensors、models/brown.safetensors），用它的留出文本',
  'real-sequences': '--model：留出的诗首数（tang）或窗口数（brown）',
  // §9 normalizer
  normalizers: '要比较的注意力权重归一化方式（逗号分隔）',
  // §9 norm
  clip: '梯度范数裁剪（0 = 不裁剪）',
};
