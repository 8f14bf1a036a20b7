/**
 * The final SSIMULACRA 2.1 score from the per-scale norms: `Msssim::Score` in src/ssimulacra2.cc of
 * cloudinary/ssimulacra2 (version 2.1, April 2023: weights retuned and a polynomial remapping added).
 */

/** The 1-norm and 4-norm of the three error maps of each component at one scale (`MsssimScale`). */
export interface ScaleNorms {
  /** SSIM' error of X, Y, B: [X 1-norm, X 4-norm, Y 1-norm, Y 4-norm, B 1-norm, B 4-norm]. */
  readonly ssim: Float64Array;
  /** Per component: [ringing 1-norm, ringing 4-norm, blurring 1-norm, blurring 4-norm] (12 values). */
  readonly edge: Float64Array;
}

/**
 * The 108 weights of 2.1, in the reference's order: component (X, Y, B), then scale (1:1 to 1:32),
 * then norm (1, 4), then map (SSIM', ringing, blurring).
 */
const WEIGHTS = [
  0, 0.0007376606707406586, 0, 0, 0.0007793481682867309, 0, 0, 0.0004371155730107379, 0, 1.1041726426657346,
  0.00066284834129271, 0.00015231632783718752, 0, 0.0016406437456599754, 0, 1.8422455520539298, 11.441172603757666, 0,
  0.0007989109436015163, 0.000176816438078653, 0, 1.8787594979546387, 10.94906990605142, 0, 0.0007289346991508072,
  0.9677937080626833, 0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0,
  0, 0.0013648766163243398, 0, 0, 0, 0, 0, 7.466890328078848, 0, 17.445833984131262, 0.0006235601634041466, 0, 0,
  6.683678146179332, 0.00037724407979611296, 1.027889937768264, 225.20515300849274, 0, 0, 19.213238186143016,
  0.0011401524586618361, 0.001237755635509985, 176.39317598450694, 0, 0, 24.43300999870476, 0.28520802612117757,
  0.0004485436923833408, 0, 0, 0, 34.77906344483772, 44.835625328877896, 0, 0, 0, 0, 0, 0, 0, 0, 0.0008680556573291698,
  0, 0, 0, 0, 0, 0.0005313191874358747, 0, 0.00016533814161379112, 0, 0, 0, 0, 0, 0.0004179171803251336,
  0.0017290828234722833, 0, 0.0020827005846636437, 0, 0, 8.826982764996862, 23.19243343998926, 0, 95.1080498811086,
  0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0, 0, 0,
  0.0005130064588990679, 0, 0.00010854057858411537,
];

/**
 * The score (100 for identical images, lower is worse, can go below 0) of the norms of every scale
 * computed. With fewer than six scales (a small image) the weights are taken in order all the same,
 * so later components use weights meant for other scales: that is what the reference does.
 */
export function scoreFromNorms(scales: readonly ScaleNorms[]): number {
  let sum = 0;
  let i = 0;
  for (let c = 0; c < 3; c++) {
    for (const scale of scales) {
      for (let n = 0; n < 2; n++) {
        sum += WEIGHTS[i++]! * Math.abs(scale.ssim[c * 2 + n]!);
        sum += WEIGHTS[i++]! * Math.abs(scale.edge[c * 4 + n]!);
        sum += WEIGHTS[i++]! * Math.abs(scale.edge[c * 4 + n + 2]!);
      }
    }
  }
  sum *= 0.9562382616834844;
  sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-5 * sum * sum * sum;
  return sum > 0 ? 100 - 10 * sum ** 0.6276336467831387 : 100;
}
