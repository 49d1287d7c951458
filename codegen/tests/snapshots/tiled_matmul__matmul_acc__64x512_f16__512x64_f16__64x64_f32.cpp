extern "C" void wsp_kernel_matmul_acc__64x512_f16__512x64_f16__64x64_f32(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_a = (uint16_t*)wsp_t[0]; const int64_t p_a_rs = wsp_s[0], p_a_cs = wsp_s[1];
  uint16_t* const p_b = (uint16_t*)wsp_t[1]; const int64_t p_b_rs = wsp_s[2], p_b_cs = wsp_s[3];
  float* const p_c = (float*)wsp_t[2]; const int64_t p_c_rs = wsp_s[4], p_c_cs = wsp_s[5];
  float v0[4096];
  float v1[4096];
  float v2[4096];
  float v3[4096];
  float v4[4096];
  // %0 = alloc
  for (int k = 0; k < 4096; ++k) v0[k] = (float)0;
  for (int k = 0; k < 4096; ++k) v1[k] = v0[k];
  for (int64_t l_k = 0; l_k < 8; ++l_k) {
  // %2 = load
  wsp::load<64, 64, wsp::F16>(v2, p_a + ((int64_t)0) * p_a_rs + ((int64_t)0 + (int64_t)64 * l_k) * p_a_cs, p_a_rs, p_a_cs);
  // %3 = load
  wsp::load<64, 64, wsp::F16>(v3, p_b + ((int64_t)0 + (int64_t)64 * l_k) * p_b_rs + ((int64_t)0) * p_b_cs, p_b_rs, p_b_cs);
  // %4 = matmul
  wsp::matmul<float, 64, 64, 64>(v2, v3, v1, v4);
  if (l_k + 1 < 8) {
  for (int k = 0; k < 4096; ++k) v1[k] = v4[k];
  }
  }
  // %5 = store
  wsp::store<64, 64, wsp::Plain<float>>(p_c, p_c_rs, p_c_cs, v4);
}
