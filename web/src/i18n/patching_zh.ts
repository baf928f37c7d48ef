// 注意力头标签页中激活修补部分（web/src/heads/patching_view.ts）的简体中文文本：与 patching.ts 键相同、顺序相同。
import type { patching } from './patching';

export const patchingZh: Record<keyof typeof patching, string> = {
  'heads.patch.title': '激活修补：哪些头承载了答案',
  'heads.patch.about':
    '让模型分别读一个干净的提示和一个改动了某个词元的“损坏”提示，在最后一个位置测量 logit 差 d = logit(答案) − logit(错误词元)。然后把某个头（在所有位置上）的输出从干净运行复制到损坏运行中：它恢复的差值份额是 (d_修补 − d_损坏) / (d_干净 − d_损坏)，若这个头独自承载了全部差值，份额就是 1。第二张表修补的是某个位置上进入某个块的残差流。点击一个单元格查看它的数值。',
  'heads.patch.clean': '干净提示',
  'heads.patch.corrupted': '损坏提示（词元数相同）',
  'heads.patch.answer': '答案词元',
  'heads.patch.wrong': '错误词元',
  'heads.patch.run': '修补',
  'heads.patch.suggested': '适合这个模型的提示对：',
  'heads.patch.pair': '第 {n} 对',
  'heads.patch.noSuggestion': '这个模型没有建议的提示对：请输入一个干净提示、一个损坏提示和两个词元。',
  'heads.patch.computing': '正在逐个修补每个头和每个残差位置…',
  'heads.patch.computed': '共 {n} 次修补运行，用时 {ms} 毫秒（引擎，在 worker 中）。',
  'heads.patch.error': '引擎无法完成修补：{message}',
  'heads.patch.lengths':
    '干净提示有 {clean} 个词元，损坏提示有 {corrupted} 个：激活修补要求两者词元数相同，这样一个提示的第 t 个位置才对应另一个提示的第 t 个位置。请把改动的词换成分词器切出同样多词元的词。',
  'heads.patch.which.answer': '答案词元',
  'heads.patch.which.wrong': '错误词元',
  'heads.patch.notOneToken': '{which}“{text}”在这个模型中是 {n} 个词元（{pieces}）：它必须是单个词元。（空格后的单词通常以空格开头。）',
  'heads.patch.diffs': '最后一个位置上的 logit(“{answer}”) − logit(“{wrong}”)：干净 {clean}，损坏 {corrupted}。',
  'heads.patch.close': '两个差值相差不到 {d}：每个份额都要除以它们之间的差距，所以修补运行中的微小变化也会显得份额很大。',
  'heads.patch.layer': '第 {l} 层',
  'heads.patch.head': '头 {h}',
  'heads.patch.map.heads': '每个头的输出恢复的份额',
  'heads.patch.map.residual': '进入每个块的残差流在各位置恢复的份额',
  'heads.patch.cell.head': '第 {l} 层、头 {h}：修补它在所有位置上的输出',
  'heads.patch.cell.residual': '修补进入第 {l} 块、位置 {t}（“{token}”）的残差流',
  'heads.patch.cell.share': '恢复的份额：{share}',
  'heads.patch.cell.formula': '= (d_修补 − d_损坏) / (d_干净 − d_损坏)，其中 d_干净 = {clean}，d_损坏 = {corrupted}（引擎的 Model.patch）。',
};
