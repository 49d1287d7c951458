extern "C" void wsp_kernel_attn_short(char* const* wsp_t, const int64_t* wsp_s, const double* wsp_sc) {
  uint16_t* const p_q = (uint16_t*)wsp_t[0]; const int64_t p_q_rs = wsp_s[0], p_q_cs = wsp_s[1];
  uint16_t* const p_k = (uint16_t*)wsp_t[1]; const int64_t p_k_rs = wsp_s[2], p_k_cs = wsp_s[3];
  uint16_t* const p_v = (uint16_t*)wsp_t[2]; const int64_t p_v_rs = wsp_s[4], p_v_cs = wsp_s[5];
  float* const p_o = (float*)wsp_t[3]; const int64_t p_o_rs = wsp_s[6], p_o_cs = wsp_s[7];
  const float p_scale = (float)wsp_sc[0]; (void)p_scale;
  float v_k[8192]; wsp::load<128, 64, wsp::F16>(v_k, p_k, p_k_rs, p_k_cs);
  // %0 = transpose
  float v0[8192]; for (int i = 0; i < 128; ++i) for (int j = 0; j < 64; ++j) v0[j * 128 + i] = v_k[i * 64 + j];
  float v_q[2048]; wsp::load<32, 64, wsp::F16>(v_q, p_q, p_q_rs, p_q_cs);
  // %1 = matmul
  float v1[4096]; wsp::matmul<float, 32, 128, 64>(v_q, v0, nullptr, v1);
  // %2 = mul
  float v2[4096];
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float a = v1[i * 128 + j]; const float b = p_scale; v2[i * 128 + j] = (float)(a * b); }
  // %3 = rowmax
  float v3[32];
  for (int i = 0; i < 32; ++i) v3[i] = wsp::reduce_row<128>(v2 + i * 128, wsp::lowest<float>(), [](const float acc, const float x) { return (float)((x > acc ? x : acc)); });
  // %4 = sub
  float v4[4096];
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float a = v2[i * 128 + j]; const float b = v3[i * 1 + 0]; v4[i * 128 + j] = (float)(a - b); }
  // %5 = exp
  float v5[4096];
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float x = v4[i * 128 + j]; v5[i * 128 + j] = (float)(wsp::exp(x)); }
  // %6 = rowsum
  float v6[32];
  for (int i = 0; i < 32; ++i) v6[i] = wsp::reduce_row<128>(v5 + i * 128, (float)0, [](const float acc, const float x) { return (float)(acc + x); });
  // %7 = div
  float v7[4096];
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 128; ++j) { const float a = v5[i * 128 + j]; const float b = v6[i * 1 + 0]; v7[i * 128 + j] = (float)(a / b); }
  // %8 = cast
  float v8[4096]; for (int k = 0; k < 4096; ++k) v8[k] = wsp::F16::round((float)v7[k]);
  float v_v[8192]; wsp::load<128, 64, wsp::F16>(v_v, p_v, p_v_rs, p_v_cs);
  // %9 = matmul
  float v9[2048]; wsp::matmul<float, 32, 64, 128>(v8, v_v, nullptr, v9);
  // %10 = store
  wsp::store<32, 64, wsp::Plain<float>>(p_o, p_o_rs, p_o_cs, v9);
}
